// applier: CsrGroupPerRow
// y = A x for a CSR matrix, one thread per row.
__global__ void spmv_csr(const int *row_ptr, const int *col_idx, const float *vals, const float *x,
                         float *y, int rows)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float sum = 0.0f;
        for (int k = row_ptr[row]; k < row_ptr[row + 1]; k++)
            sum += vals[k] * x[col_idx[k]];
        y[row] = sum;
    }
}
