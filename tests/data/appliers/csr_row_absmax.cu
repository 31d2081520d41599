// applier: CsrGroupPerRow
// Largest magnitude among each sparse row's stored values.
__global__ void csr_row_absmax(const int *row_ptr, const int *col_idx, const float *vals, float *out, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float m = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k)
        m = fmaxf(m, fabsf(vals[k]));
    out[r] = m;
}
