// applier: BatchedSmallMatmul
// A 2-D grid over (row, col); each thread loops over the batch (while loop over k).
__global__ void bmm_loop(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M || c >= N) return;
    for (int b = 0; b < batch; ++b) {
        float s = 0.0f;
        int k = 0;
        while (k < K) {
            s += A[(b * M + r) * K + k] * B[(b * K + k) * N + c];
            k++;
        }
        C[(b * M + r) * N + c] = s;
    }
}
