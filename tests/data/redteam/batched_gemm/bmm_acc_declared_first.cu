// applier: BatchedSmallMatmul
// The accumulator declared on the first line, the indices and the guard after it; flat 1-D id.
__global__ void bmm_sum_first(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    float sum = 0.0f;
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int mat = gid / (M * N);
    int row = gid / N % M;
    int col = gid % N;
    if (mat >= batch)
        return;
    for (int k = 0; k < K; k++)
        sum += A[mat * M * K + row * K + k] * B[mat * K * N + k * N + col];
    C[gid] = sum;
}
