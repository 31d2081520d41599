// y = A x with A stored column-major (leading dimension m): thread i strides across the columns.
#include <cuda_runtime.h>

__global__ void gemv_colmajor(const float *A, const float *x, float *y, int m, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        float sum = 0.0f;
        for (int j = 0; j < n; j++)
            sum += A[i + j * m] * x[j];
        y[i] = sum;
    }
}
