// Double-precision CSR matrix-vector product: one thread per row, a while loop over its entries.
#include <cuda_runtime.h>

__global__ void csr_matvec_f64(const int *rowstart, const int *colind, const double *val, const double *vec,
                               double *res, int nrow, int ncol)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrow)
        return;
    int p = rowstart[r], end = rowstart[r + 1];
    double t = 0.0;
    while (p < end) {
        t += val[p] * vec[colind[p]];
        ++p;
    }
    res[r] = t;
}
