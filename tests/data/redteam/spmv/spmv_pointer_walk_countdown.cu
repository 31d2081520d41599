// CSR SpMV with pointers walked along the row's values and columns, the row length counted down.
// applier: CsrGroupPerRow
__global__ void spmv_walk(const int *rp, const int *ci, const float *v, const float *x, float *y, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *val = v + rp[r];
        const int *col = ci + rp[r];
        float s = 0.0f;
        for (int k = rp[r]; k < rp[r + 1]; ++k) {
            s += *val * x[*col];
            ++val;
            ++col;
        }
        y[r] = s;
    }
}
