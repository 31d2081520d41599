// Batched double C[b] = alpha * A[b] * Bt[b]^T + beta * C[b], a flat thread id divided by M*N.
#include <cuda_runtime.h>

__global__ void dbmm_flat(int batch, int M, int N, int K, double alpha, const double *A, const double *Bt,
                          double beta, double *C) {
    long t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= batch * M * N) return;
    int mat = t / (M * N);
    int rem = t % (M * N);
    int r = rem / N, c = rem % N;
    double s = 0.0;
    for (int p = 0; p < K; p++)
        s = fma(A[(mat * M + r) * K + p], Bt[(mat * N + c) * K + p], s);
    C[mat * M * N + r * N + c] = alpha * s + beta * C[mat * M * N + r * N + c];
}
