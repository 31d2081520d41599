// applier: GroupPerRow
// y = alpha * A x + beta * y with A row-major, one thread per row.
__global__ void gemv(int m, int n, float alpha, const float *A, const float *x, float beta, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        float dot = 0.0f;
        for (int k = 0; k < n; k++)
            dot += A[i * n + k] * x[k];
        y[i] = alpha * dot + beta * y[i];
    }
}
