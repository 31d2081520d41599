// applier: BatchedSmallMatmul
// 64-bit grid-stride loop over all outputs, C = alpha * A*B + beta * C, acc written `acc = acc + ..`.
__global__ void bmm_gs(const float *A, const float *B, float *C, float alpha, float beta, long long batch, int M, int N, int K)
{
    long long total = batch * M * N;
    for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += (long long)gridDim.x * blockDim.x) {
        long long b = o / (M * N);
        int i = (int)(o / N % M);
        int j = (int)(o % N);
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc = acc + A[b * M * K + i * K + k] * B[b * K * N + k * N + j];
        C[o] = alpha * acc + beta * C[o];
    }
}
