// applier: BatchedSmallMatmul
// The M*N outputs of one matrix flattened along x (decoded with / and %), the batch on blockIdx.y.
__global__ void bmm_rowcol_y(const float *A, const float *B, float *C, int M, int N, int K, int batch)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y;
    if (tid >= M * N || b >= batch)
        return;
    const int row = tid / N;
    const int col = tid - row * N;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) {
        acc += A[(b * M + row) * K + k] * B[(b * K + k) * N + col];
    }
    C[(b * M + row) * N + col] = acc;
}
