// y = alpha * A^T x + beta * y for a row-major rows x cols matrix A, as a template instantiated
// for float: one thread per output column runs down its column.
#include <cuda_runtime.h>

template <typename Real>
__global__ void sgemv_t(const Real *A, const Real *x, Real *y, Real alpha, Real beta, int rows, int cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols)
        return;
    Real dot = 0;
#pragma unroll 4
    for (int r = 0; r < rows; ++r)
        dot += A[(size_t)r * cols + c] * x[r];
    y[c] = alpha * dot + beta * y[c];
}

template __global__ void sgemv_t<float>(const float *, const float *, float *, float, float, int, int);
