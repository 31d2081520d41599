// applier: BatchedSmallMatmul
// Rows along x and columns along y (uncoalesced, as many first attempts are); batch on z.
__global__ void bmm_rows_x(const float *A, const float *B, float *C, int M, int N, int K, int batch)
{
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    int col = threadIdx.y + blockIdx.y * blockDim.y;
    int z = blockIdx.z;
    if (row < M && col < N) {
        float t = 0.0f;
        for (int kk = 0; kk < K; kk++)
            t += A[z * M * K + row * K + kk] * B[z * K * N + kk * N + col];
        C[z * M * N + row * N + col] = t;
    }
}
