// The vendor samples' naive transpose: a 32x32 tile per block of 32x8 threads, each thread
// copying TILE_DIM / BLOCK_ROWS elements down its column, offsets precomputed, no guard (the
// sizes are multiples of the tile).
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transposeNaive(float *odata, float *idata, int width, int height)
{
    // 32x32 tile of (xIndex, yIndex): read with xIndex contiguous, written with yIndex contiguous,
    // through shared memory padded by one column (conflict-free transposed reads).
    __shared__ float tile_rg[32][33];
    const int a0_rg = blockIdx.x * 32;
    const int b0_rg = blockIdx.y * 32;
#pragma unroll
    for (int j_rg = 0; j_rg < 32; j_rg += 8) {
        int xIndex = a0_rg + threadIdx.x; int yIndex = b0_rg + threadIdx.y + j_rg; int index_in = xIndex + width * yIndex; int index_out = yIndex + height * xIndex;
        if (xIndex < (width / 32) * 32 && yIndex < (height / 32) * 32)
            tile_rg[threadIdx.y + j_rg][threadIdx.x] = idata[index_in + 0 * width];
    }
    __syncthreads();
#pragma unroll
    for (int j_rg = 0; j_rg < 32; j_rg += 8) {
        int xIndex = a0_rg + threadIdx.y + j_rg; int yIndex = b0_rg + threadIdx.x; int index_in = xIndex + width * yIndex; int index_out = yIndex + height * xIndex;
        if (xIndex < (width / 32) * 32 && yIndex < (height / 32) * 32)
            odata[index_out + 0] = tile_rg[threadIdx.x][threadIdx.y + j_rg];
    }
}
