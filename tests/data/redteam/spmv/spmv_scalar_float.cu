// CSR SpMV, one thread per row, the row range in locals.
// applier: CsrGroupPerRow
__global__ void spmv_csr(int num_rows, const int *row_ptr, const int *col_idx, const float *vals, const float *x, float *y)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < num_rows) {
        int start = row_ptr[row];
        int end = row_ptr[row + 1];
        float dot = 0.0f;
        for (int jj = start; jj < end; jj++)
            dot += vals[jj] * x[col_idx[jj]];
        y[row] = dot;
    }
}
