// applier: BatchedSmallMatmul
// Grid-stride loop over every output of every matrix, fmaf accumulation, double-checked sizes.
__global__ void bmm_gs(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int total = batch * M * N;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += blockDim.x * gridDim.x) {
        int j = t % N;
        int i = (t / N) % M;
        int b = t / (M * N);
        float acc = 0.0f;
        for (int k = 0; k < K; k++)
            acc = fmaf(A[(b * M + i) * K + k], B[(b * K + k) * N + j], acc);
        C[t] = acc;
    }
}
