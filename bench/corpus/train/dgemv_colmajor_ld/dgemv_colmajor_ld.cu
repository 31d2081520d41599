// y = A v in double precision, A column-major with leading dimension lda (>= nrows): thread r
// forms row r's dot product with a while loop over the columns.
#include <cuda_runtime.h>

__global__ void dgemv_cm_ld(int nrows, int ncols, int lda, const double *a, const double *v, double *out)
{
    int r = threadIdx.x + blockDim.x * blockIdx.x;
    if (r < nrows) {
        double acc = 0.0;
        int c = 0;
        while (c < ncols) {
            acc += a[(long long)c * lda + r] * v[c];
            c++;
        }
        out[r] = acc;
    }
}
