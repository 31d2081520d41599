// Column maxima of an int matrix, a grid-stride loop over the columns.
// applier: ColumnSplitReduction
#include <climits>

__global__ void col_max_i32(const int *m, int *out, int rows, int cols)
{
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += blockDim.x * gridDim.x) {
        int best = INT_MIN;
        for (int r = 0; r < rows; r++)
            best = max(best, m[r * cols + c]);
        out[c] = best;
    }
}
