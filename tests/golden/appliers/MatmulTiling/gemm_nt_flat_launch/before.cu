// C = A * B^T (A is m x k, B is n x k, both row-major) with a flat 1-D launch over C.
#include <cuda_runtime.h>

__global__ void matmul_nt(const float *a, const float *b, float *c, int m, int n, int k)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m * n)
        return;
    int i = t / n, j = t % n;
    float s = 0.f;
    for (int p = 0; p < k; ++p)
        s += a[i * k + p] * b[j * k + p];
    c[t] = s;
}
