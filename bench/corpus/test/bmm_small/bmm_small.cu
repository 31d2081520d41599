// A batch of small row-major GEMMs C[b] = A[b] * B[b] (M x K times K x N): one thread per
// element of C over a flat 1-D launch.
#include <cuda_runtime.h>

__global__ void bmm(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    long idx = blockIdx.x * (long)blockDim.x + threadIdx.x;
    long total = (long)batch * M * N;
    if (idx >= total)
        return;
    int n = idx % N;
    int m = (idx / N) % M;
    long b = idx / ((long)M * N);
    const float *a = A + b * M * K + (long)m * K;
    const float *bm = B + b * K * N + n;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += a[k] * bm[k * N];
    C[idx] = acc;
}
