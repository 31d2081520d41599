// applier: BatchedSmallMatmul
// C[b] += A[b] * B[b] in double with long long indices; one block per matrix, 2-D block.
__global__ void dbmm_acc(const double *A, const double *B, double *C, long long batch, int M, int N, int K)
{
    long long b = blockIdx.x;
    long long i = threadIdx.y;
    long long j = threadIdx.x;
    if (b < batch && i < M && j < N) {
        double s = 0.0;
        for (int k = 0; k < K; k++)
            s += A[b * M * K + i * K + k] * B[b * K * N + k * N + j];
        C[b * M * N + i * N + j] += s;
    }
}
