// applier: BatchedSmallMatmul
// One block per matrix, a 1-D block of M*N threads split with / and %, batch guard from blockIdx.x.
__global__ void small_bmm(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int mat = blockIdx.x;
    int tid = threadIdx.x;
    int row = tid / N;
    int col = tid % N;
    if (mat < batch && row < M) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[mat * M * K + row * K + k] * B[mat * K * N + k * N + col];
        C[mat * M * N + row * N + col] = acc;
    }
}
