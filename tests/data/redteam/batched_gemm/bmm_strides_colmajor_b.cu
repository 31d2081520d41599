// applier: BatchedSmallMatmul
// Separate batch strides, row-major A times column-major B (each column of B contiguous), alpha/beta.
__global__ void gemm_batched_nt(int M, int N, int K, float alpha, const float *A, int strideA,
                                const float *B, int strideB, float beta, float *C, int strideC, int batch)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int p = blockIdx.z;
    if (i >= M || j >= N || p >= batch) return;
    float d = 0.0f;
    for (int k = 0; k < K; ++k)
        d += A[p * strideA + i * K + k] * B[p * strideB + j * K + k];
    C[p * strideC + i * N + j] = alpha * d + beta * C[p * strideC + i * N + j];
}
