// out = in^T for a rows x cols row-major matrix; reads coalesced, writes strided.
#include <cuda_runtime.h>

__global__ void transpose_naive(float *out, const float *in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        out[x * rows + y] = in[y * cols + x];
    }
}

void launch_transpose_naive(float *out, const float *in, int rows, int cols)
{
    dim3 block(16, 16);
    dim3 grid((cols + 15) / 16, (rows + 15) / 16);
    transpose_naive<<<grid, block>>>(out, in, rows, cols);
}
