// applier: BatchedSmallMatmul
// The dot product in a __device__ helper; 2-D launch with the batch on blockIdx.z.
__device__ float dot_row_col(const float *a, const float *b, int K, int ldb)
{
    float s = 0.0f;
    for (int k = 0; k < K; ++k)
        s += a[k] * b[k * ldb];
    return s;
}

__global__ void bmm_dot(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (i < M && j < N && b < batch)
        C[(b * M + i) * N + j] = dot_row_col(A + (b * M + i) * K, B + b * K * N + j, K, N);
}
