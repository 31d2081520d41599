// Logistic sigmoid of a double matrix, one thread per element on a 2-D grid.
#include <cuda_runtime.h>

__global__ void logistic_2d(const double *in, double *out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols)
        return;
    size_t k = (size_t)r * cols + c;
    out[k] = 1.0 / (1.0 + exp(-in[k]));
}
