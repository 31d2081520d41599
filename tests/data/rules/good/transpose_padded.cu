// Tiled transpose through a padded shared tile: both global accesses are coalesced.
#include <cuda_runtime.h>

__global__ void transpose_padded(float *__restrict__ out, const float *__restrict__ in, int rows, int cols)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows) {
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    }
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (x < rows && y < cols) {
        out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
    }
}

void run_transpose(float *d_out, const float *d_in, int rows, int cols)
{
    dim3 block(32, 32);
    dim3 grid((cols + 31) / 32, (rows + 31) / 32);
    transpose_padded<<<grid, block>>>(d_out, d_in, rows, cols);
}
