// applier: ColumnSplitReduction
// y = beta * y + alpha * A^T x, summed straight into y[col] (no register accumulator).
__global__ void gemv_t_inplace(const float *A, const float *x, float *y, float alpha, float beta, int m, int n)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < n) {
        y[col] *= beta;
        for (int i = 0; i < m; i++)
            y[col] += alpha * A[(size_t)i * n + col] * x[i];
    }
}
