// y = alpha * A x + beta * y, row-major A with a leading dimension, one thread per row.
// applier: GroupPerRow
__global__ void sgemv_n(int m, int n, float alpha, const float *A, int lda, const float *x, float beta, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        float dot = 0.0f;
        for (int j = 0; j < n; ++j)
            dot += A[i * lda + j] * x[j];
        y[i] = alpha * dot + beta * y[i];
    }
}
