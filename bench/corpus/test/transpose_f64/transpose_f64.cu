// Transpose of a row-major double matrix with a flat 1-D launch (row and column by div/mod).
#include <cuda_runtime.h>

__global__ void transpose_f64(const double *src, double *dst, int rows, int cols)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < rows * cols) {
        int r = idx / cols;
        int c = idx % cols;
        dst[c * rows + r] = src[idx];
    }
}
