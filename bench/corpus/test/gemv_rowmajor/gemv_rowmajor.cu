// y = A x for a row-major A: one thread forms one row's dot product.
#include <cuda_runtime.h>

__global__ void matvec_rows(const float *A, const float *x, float *y, int M, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M) {
        float dot = 0.0f;
        for (int j = 0; j < N; ++j)
            dot += A[(long long)i * N + j] * x[j];
        y[i] = dot;
    }
}
