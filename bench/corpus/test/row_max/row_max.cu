// Largest element of every row: one thread per row.
#include <cuda_runtime.h>

__global__ void row_max(const float *m, float *out, int nrows, int ncols)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < nrows) {
        const float *p = m + (size_t)row * ncols;
        float best = p[0];
        for (int j = 1; j < ncols; j++)
            best = fmaxf(best, p[j]);
        out[row] = best;
    }
}
