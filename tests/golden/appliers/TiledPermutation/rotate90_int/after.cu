// Rotate an int image 90 degrees clockwise: out is W x H, out[x][H - 1 - y] = in[y][x].
// applier: TiledPermutation
__global__ void rotate_cw(const int *img, int *rot, int H, int W)
{
    // 64x64 tile of (col, row): read with col contiguous, written with row contiguous,
    // through shared memory padded by one column (conflict-free transposed reads).
    __shared__ int tile_rg[64][65];
    const int a0_rg = blockIdx.x * 64;
    const int b0_rg = blockIdx.y * 64;
#pragma unroll
    for (int j_rg = 0; j_rg < 64; j_rg += 8) {
        int col = a0_rg + threadIdx.x; int row = b0_rg + threadIdx.y + j_rg; 
        if (row < H && col < W)
            tile_rg[threadIdx.y + j_rg][threadIdx.x] = img[row * W + col];
    }
    __syncthreads();
#pragma unroll
    for (int j_rg = 0; j_rg < 64; j_rg += 8) {
        int col = a0_rg + threadIdx.y + j_rg; int row = b0_rg + threadIdx.x; 
        if (row < H && col < W)
            rot[col * H + (H - 1 - row)] = tile_rg[threadIdx.x][threadIdx.y + j_rg];
    }
}
