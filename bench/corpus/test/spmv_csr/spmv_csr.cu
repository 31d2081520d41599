// y = A x for a CSR matrix: one thread per row walks that row's non-zeros.
#include <cuda_runtime.h>

__global__ void spmv_csr_scalar(int num_rows, int num_cols, const int *row_ptr, const int *col_idx,
                                const float *vals, const float *x, float *y)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < num_rows) {
        float dot = 0;
        for (int jj = row_ptr[row]; jj < row_ptr[row + 1]; jj++)
            dot += vals[jj] * x[col_idx[jj]];
        y[row] = dot;
    }
}
