// Sum of squares of every row of a double matrix: one thread per row, a while loop over it.
#include <cuda_runtime.h>

__global__ void row_sum_of_squares(const double *mat, double *out, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    double s = 0.0;
    int j = 0;
    while (j < cols) {
        double v = mat[(size_t)row * cols + j];
        s += v * v;
        ++j;
    }
    out[row] = s;
}
