// applier: CsrGroupPerRow
// The same product with the row range in locals and a grid-stride loop over rows.
__global__ void csr_times_vector(int rows, const int *row_ptr, const int *col_idx, const float *vals,
                                 const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += blockDim.x * gridDim.x) {
        const int begin = row_ptr[i];
        const int end = row_ptr[i + 1];
        float acc = 0;
        for (int p = begin; p < end; ++p) {
            const float a = vals[p];
            acc += a * x[col_idx[p]];
        }
        y[i] = acc;
    }
}
