// Column means of an int matrix into floats, element access through a macro.
// applier: ColumnSplitReduction
#define AT(mat, r, c, ld) (mat)[(r) * (ld) + (c)]

__global__ void col_mean(const int *counts, float *means, int rows, int cols)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < cols) {
        int total = 0;
        for (int i = 0; i < rows; i++)
            total += AT(counts, i, j, cols);
        means[j] = (float)total / rows;
    }
}
