// applier: ColumnSplitReduction
// out = A^T v for a row-major m x n matrix: thread j walks a pointer down column j and
// another along v (bumped in the for update).
__global__ void gemv_t_walk(const float *A, const float *v, float *out, int m, int n)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    const float *a = A + j;
    const float *w = v;
    float total = 0.0f;
    for (int i = 0; i < m; ++i, ++w) {
        total += *a * *w;
        a += n;
    }
    out[j] = total;
}
