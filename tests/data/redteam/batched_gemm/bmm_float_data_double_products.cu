// applier: BatchedSmallMatmul
// Float matrices, each product formed and summed in double (mixed precision), rounded once at the store.
__global__ void bmm_mixed(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= batch * M * N)
        return;
    int b = t / (M * N), i = t / N % M, j = t % N;
    double s = 0.0;
    for (int k = 0; k < K; ++k)
        s += (double)A[(b * M + i) * K + k] * (double)B[(b * K + k) * N + j];
    C[t] = (float)s;
}
