// applier: ColumnSplitReduction
// y = A^T x: thread j walks down column j.
__global__ void gemv_t(const float *A, const float *x, float *y, int m, int n)
{
    const int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j >= n) return;
    float acc = 0.0f;
    for (int i = 0; i < m; i++) acc += A[(size_t)i * n + j] * x[i];
    y[j] = acc;
}
