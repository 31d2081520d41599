// applier: BatchedSmallMatmul
// Each k step loads its two factors into locals first; batch on blockIdx.z, 2-D block over (row, col).
__global__ void bmm_locals(const double *A, const double *B, double *C, int M, int N, int K, int batch)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (col < N && row < M && b < batch) {
        double acc = 0.0;
        for (int k = 0; k < K; ++k) {
            double a = A[((size_t)b * M + row) * K + k];
            double w = B[((size_t)b * K + k) * N + col];
            acc += a * w;
        }
        C[((size_t)b * M + row) * N + col] = acc;
    }
}
