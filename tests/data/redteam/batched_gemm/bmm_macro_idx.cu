// applier: BatchedSmallMatmul
// Index macros for A, B, C; batch as blockIdx.z; early-return guard.
#define IA(b, i, k) ((b) * M * K + (i) * K + (k))
#define IB(b, k, j) ((b) * K * N + (k) * N + (j))
#define IC(b, i, j) ((b) * M * N + (i) * N + (j))

__global__ void bgemm_macro(const float *A, const float *B, float *C, int M, int N, int K)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (i >= M || j >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[IA(b, i, k)] * B[IB(b, k, j)];
    C[IC(b, i, j)] = acc;
}
