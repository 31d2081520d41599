// applier: GroupPerRow
// y += A x in double for a row-major A, accumulated straight into y[row] with `y = y + ...`.
__global__ void dgemv_rows_inplace(int nrows, int ncols, const double *A, const double *x, double *y)
{
    int row = blockDim.x * blockIdx.x + threadIdx.x;
    if (row >= nrows)
        return;
    for (int k = 0; k < ncols; ++k) {
        y[row] = y[row] + A[(long long)row * ncols + k] * x[k];
    }
}
