// Largest value of every column of an int matrix: one thread per column.
#include <climits>
#include <cuda_runtime.h>

__global__ void col_max(const int *a, int *colmax, int nr, int nc)
{
    int c = threadIdx.x + blockDim.x * blockIdx.x;
    if (c < nc) {
        int m = INT_MIN;
        for (int r = 0; r < nr; r++)
            m = max(m, a[r * nc + c]);
        colmax[c] = m;
    }
}
