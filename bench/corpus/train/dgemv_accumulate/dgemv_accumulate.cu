// y += A x in double precision, A row-major: one thread per row.
#include <cuda_runtime.h>

__global__ void dgemv_acc(int rows, int cols, const double *A, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows)
        return;
    double acc = y[i];
    for (int j = 0; j < cols; j++)
        acc += A[i * cols + j] * x[j];
    y[i] = acc;
}
