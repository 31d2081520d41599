// applier: BatchedSmallMatmul
// Pointer walks `*pa++` along A's row and `pb += N` down B's column; one block per matrix.
__global__ void bmm_walk(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int b = blockIdx.x;
    int i = threadIdx.y, j = threadIdx.x;
    if (b >= batch || i >= M || j >= N) return;
    const float *pa = A + (b * M + i) * K;
    const float *pb = B + b * K * N + j;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += *pa++ * *pb;
        pb += N;
    }
    C[(b * M + i) * N + j] = acc;
}
