// Scaled batched products of small double matrices, C[b] = alpha * A[b] * B[b]^T (B stored one
// row per output column), one thread per output element of the whole batch on a flat 1-D launch.
#include <cuda_runtime.h>

__global__ void dbmm_scaled(int batch, int M, int N, int K, double alpha,
                            const double *A, const double *Bt, double *C)
{
    long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= (long long)batch * M * N)
        return;
    int which = gid / (M * N);
    int within = gid % (M * N);
    int r = within / N;
    int c = within % N;
    const double *a = A + (long long)which * M * K;
    const double *bt = Bt + (long long)which * N * K;
    double dot = 0.0;
    for (int p = 0; p < K; p++)
        dot += a[r * K + p] * bt[c * K + p];
    C[gid] = alpha * dot;
}
