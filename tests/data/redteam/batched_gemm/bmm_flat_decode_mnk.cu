// applier: BatchedSmallMatmul
// One thread per output of the whole batch: a flat 1-D index decoded with / and %, distinct M, N, K,
// the guard on the decoded batch index.
__global__ void bmm_flat_mnk(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int b = idx / (M * N);
    int i = (idx / N) % M;
    int j = idx % N;
    if (b < batch) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[b * M * K + i * K + k] * B[b * K * N + k * N + j];
        C[b * M * N + i * N + j] = sum;
    }
}
