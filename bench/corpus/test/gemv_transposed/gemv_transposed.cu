// out = A^T v for a row-major m x n matrix A: one thread per column, walking a pointer down it.
#include <cuda_runtime.h>

__global__ void gemv_t(const float *a, const float *v, float *out, int m, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    const float *col = a + j;
    float s = 0.f;
    for (int i = 0; i < m; i++, col += n)
        s += *col * v[i];
    out[j] = s;
}
