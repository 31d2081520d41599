// CSR SpMM C = A B (B dense, row-major, 8 columns): one thread per sparse row, the dense
// columns in an inner loop and a register array.
// applier: CsrGroupPerRow
#define NCOLS 8

__global__ void spmm_csr8(const int *rowptr, const int *colind, const float *val, const float *B, float *C, int nrows)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < nrows) {
        for (int c = 0; c < NCOLS; ++c) {
            float sum = 0.0f;
            for (int e = rowptr[row]; e < rowptr[row + 1]; ++e)
                sum += val[e] * B[colind[e] * NCOLS + c];
            C[row * NCOLS + c] = sum;
        }
    }
}
