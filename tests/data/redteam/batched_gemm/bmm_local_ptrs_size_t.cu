// applier: BatchedSmallMatmul
// Local matrix pointers with 64-bit offsets, size_t row/column indices from a 2-D launch, batch on y.
__global__ void bmm_ptrs(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    size_t b = blockIdx.y;
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t i = t / N, j = t % N;
    if (b >= batch || i >= M)
        return;
    const float *a = A + (size_t)b * M * K;
    const float *bm = B + (size_t)b * K * N;
    float *c = C + (size_t)b * M * N;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += a[i * K + k] * bm[k * N + j];
    c[i * N + j] = acc;
}
