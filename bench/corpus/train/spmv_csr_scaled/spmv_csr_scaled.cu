// y = alpha * A x + beta * y for a CSR matrix A: one thread per row walks pointers along the
// row's values and column indices.
#include <cuda_runtime.h>

__global__ void csr_gemv_scaled(int m, float alpha, const int *rp, const int *ci, const float *a, const float *x,
                                float beta, float *y, int ncols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        const int lo = rp[row];
        const float *av = a + lo;
        const int *cv = ci + lo;
        float dot = 0.0f;
        for (int k = lo; k < rp[row + 1]; k++) {
            dot += *av * x[*cv];
            av++;
            cv++;
        }
        y[row] = alpha * dot + beta * y[row];
    }
}
