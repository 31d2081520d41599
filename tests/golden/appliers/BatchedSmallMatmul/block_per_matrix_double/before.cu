// applier: BatchedSmallMatmul
// One block per matrix, threadIdx.y = row, threadIdx.x = column, block (N, M); no guard.
__global__ void block_gemm(const double *A, const double *B, double *C, int M, int N, int K)
{
    const double *a = A + (size_t)blockIdx.x * M * K;
    const double *b = B + (size_t)blockIdx.x * K * N;
    double *c = C + (size_t)blockIdx.x * M * N;
    double s = 0.0;
    for (int k = 0; k < K; ++k)
        s += a[threadIdx.y * K + k] * b[k * N + threadIdx.x];
    c[threadIdx.y * N + threadIdx.x] = s;
}
