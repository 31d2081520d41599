// applier: BatchedSmallMatmul
// Index macros with the leading dimension as a macro argument; x over columns, y over rows, z batch.
#define A_AT(b, i, k) A[((b) * M + (i)) * K + (k)]
#define B_AT(b, k, j) B[((b) * K + (k)) * N + (j)]
#define C_AT(b, i, j) C[((b) * M + (i)) * N + (j)]

__global__ void bmm_macros(const float *A, const float *B, float *C, int M, int N, int K, int batch)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (b < batch && i < M && j < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A_AT(b, i, k) * B_AT(b, k, j);
        C_AT(b, i, j) = acc;
    }
}
