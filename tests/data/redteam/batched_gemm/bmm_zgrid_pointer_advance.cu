// applier: BatchedSmallMatmul
// 2-D launch (x over columns, y over rows), batch on blockIdx.z, the operand pointers moved to the
// matrix at the top.
__global__ void batched_mm(const float *A, const float *B, float *C, int M, int N, int K, int batch)
{
    int b = blockIdx.z;
    A += b * M * K;
    B += b * K * N;
    C += b * M * N;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float s = 0;
        for (int k = 0; k < K; k++)
            s += A[row * K + k] * B[k * N + col];
        C[row * N + col] = s;
    }
}
