// applier: BatchedSmallMatmul
// The batch is a launch dimension with no guard (grid.y = batch): one block per matrix, 1-D block
// of M*N threads split by the row length.
__global__ void bmm_noguard(const float *A, const float *B, float *C, int M, int N, int K)
{
    const int b = blockIdx.y;
    const int i = threadIdx.x / N;
    const int j = threadIdx.x % N;
    float v = 0.0f;
    for (int k = 0; k < K; ++k)
        v += A[b * M * K + i * K + k] * B[b * K * N + k * N + j];
    C[b * M * N + i * N + j] = v;
}
