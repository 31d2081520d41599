// applier: BatchedSmallMatmul
// cuBLAS-like strided batched GEMM: explicit strides, alpha/beta, long long strides.
__global__ void sgemm_strided_batched(int m, int n, int k, float alpha, const float *A, long long strideA,
                                      const float *B, long long strideB, float beta, float *C, long long strideC, int batchCount)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int batch = blockIdx.z;
    if (row < m && col < n && batch < batchCount) {
        float dot = 0.0f;
        for (int p = 0; p < k; ++p)
            dot += A[batch * strideA + row * k + p] * B[batch * strideB + p * n + col];
        C[batch * strideC + row * n + col] = alpha * dot + beta * C[batch * strideC + row * n + col];
    }
}
