// applier: CsrGroupPerRow
// CSR y = A x with the row from a 2-D grid of 1-D blocks (grids past 65535 blocks in y).
__global__ void spmv_grid2d(const int *rows_begin, const int *col, const float *val, const float *x, float *y, int rows)
{
    const int r = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int k = rows_begin[r]; k < rows_begin[r + 1]; ++k)
        s += val[k] * x[col[k]];
    y[r] = s;
}
