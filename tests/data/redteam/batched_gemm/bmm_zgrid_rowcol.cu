// applier: BatchedSmallMatmul
// Textbook: blockIdx.z is the batch, 2-D threads over (row, col), C = A * B, all M x K x N.
__global__ void batched_matmul(const float *A, const float *B, float *C, int M, int N, int K, int batch)
{
    int b = blockIdx.z;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < batch && row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[b * M * K + row * K + k] * B[b * K * N + k * N + col];
        C[b * M * N + row * N + col] = sum;
    }
}
