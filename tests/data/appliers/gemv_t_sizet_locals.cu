// applier: ColumnSplitReduction
// out = A^T v with 64-bit indices and the sizes copied into locals first.
__global__ void gemv_t_sizet(const float *A, const float *v, float *out, int m, int n)
{
    const int rows = m, cols = n;
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= (size_t)cols)
        return;
    float s = 0.0f;
    for (size_t i = 0; i < (size_t)rows; ++i)
        s += A[i * cols + j] * v[i];
    out[j] = s;
}
