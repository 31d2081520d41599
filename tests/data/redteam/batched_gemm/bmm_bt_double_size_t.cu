// applier: BatchedSmallMatmul
// C = A * B^T (B stored N x K), double, size_t offsets, batch from blockIdx.z.
__global__ void bmm_nt(const double *A, const double *B, double *C, int M, int N, int K)
{
    size_t bz = blockIdx.z;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M && j < N) {
        const size_t oa = bz * M * K, ob = bz * N * K, oc = bz * M * N;
        double s = 0.0;
        for (int k = 0; k < K; k++)
            s += A[oa + i * K + k] * B[ob + j * K + k];
        C[oc + i * N + j] = s;
    }
}
