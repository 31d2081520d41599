// Inclusive prefix sum along every row: one thread runs down one row.
#include <cuda_runtime.h>

__global__ void row_cumsum(const float *src, float *dst, int rows, int cols)
{
    int row = blockDim.x * blockIdx.x + threadIdx.x;
    if (row >= rows)
        return;
    float running = 0.f;
    for (int j = 0; j < cols; j++) {
        running += src[row * cols + j];
        dst[row * cols + j] = running;
    }
}
