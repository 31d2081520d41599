// out = in^T for a rows x cols row-major matrix; reads coalesced, writes strided.
#include <cuda_runtime.h>

__global__ void transpose_naive(float *out, const float *in, int rows, int cols)
{
    // 32x32 tile of (x, y): read with x contiguous, written with y contiguous,
    // through shared memory padded by one column (conflict-free transposed reads).
    __shared__ float tile_rg[32][33];
    const int a0_rg = blockIdx.x * 32;
    const int b0_rg = blockIdx.y * 32;
#pragma unroll
    for (int j_rg = 0; j_rg < 32; j_rg += 8) {
        int x = a0_rg + threadIdx.x; int y = b0_rg + threadIdx.y + j_rg; 
        if (x < cols && y < rows)
            tile_rg[threadIdx.y + j_rg][threadIdx.x] = in[y * cols + x];
    }
    __syncthreads();
#pragma unroll
    for (int j_rg = 0; j_rg < 32; j_rg += 8) {
        int x = a0_rg + threadIdx.y + j_rg; int y = b0_rg + threadIdx.x; 
        if (x < cols && y < rows)
            out[x * rows + y] = tile_rg[threadIdx.x][threadIdx.y + j_rg];
    }
}

void launch_transpose_naive(float *out, const float *in, int rows, int cols)
{
    dim3 block(16, 16);
    dim3 grid((cols + 15) / 16, (rows + 15) / 16);
    transpose_naive<<<grid, block>>>(out, in, rows, cols);
}
