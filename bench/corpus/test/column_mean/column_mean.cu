// Mean of every column of a row-major matrix: one thread walks down one column.
#include <cuda_runtime.h>

__global__ void column_mean(const float *__restrict__ data, float *__restrict__ mean, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols)
        return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r)
        acc += data[r * cols + col];
    mean[col] = acc / rows;
}
