// applier: BatchedSmallMatmul
// Inclusive guards (`row <= M - 1`), a k loop ended with `!=`, column-major C, leading dimensions in locals.
__global__ void bmm_incl(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    const int lda = K, ldb = N, ldc = M;
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (row <= M - 1 && col <= N - 1 && b <= batch - 1) {
        float s = 0.f;
        for (int k = 0; k != K; ++k)
            s += A[b * M * K + row * lda + k] * B[b * K * N + k * ldb + col];
        C[b * M * N + col * ldc + row] = s;
    }
}
