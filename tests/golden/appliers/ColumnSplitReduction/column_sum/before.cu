// applier: ColumnSplitReduction
// Sum of every column of a row-major matrix, one thread per column.
__global__ void column_sum(const float *m, float *sums, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 0.0f;
        for (int r = 0; r < rows; ++r)
            s += m[r * cols + c];
        sums[c] = s;
    }
}
