// Integer CSR product with short rows (6 non-zeros), as a template instantiated for int: the
// row range is read into locals and the row index comes from a 2-D grid of 1-D blocks.
#include <cuda_runtime.h>

template <typename I>
__global__ void csr_count_product(const I *weights, const int *cols, const int *start, const I *counts, I *totals,
                                  int rows, int width)
{
    const int row = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const int b = start[row];
    const int e = start[row + 1];
    I t = 0;
    for (int q = b; q < e; ++q)
        t += weights[q] * counts[cols[q]];
    totals[row] = t;
}

template __global__ void csr_count_product<int>(const int *, const int *, const int *, const int *, int *, int, int);
