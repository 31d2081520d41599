// applier: BatchedSmallMatmul
// Integer batched product (exact: the order of the sum does not matter), flat index, early return.
__global__ void ibmm(const int *A, const int *B, int *C, int batch, int M, int N, int K)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= batch * M * N) return;
    int b = t / (M * N);
    int r = t % (M * N) / N;
    int c = t % N;
    int acc = 0;
    for (int k = 0; k < K; ++k)
        acc += A[(b * M + r) * K + k] * B[(b * K + k) * N + c];
    C[t] = acc;
}
