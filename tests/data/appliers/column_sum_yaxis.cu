// applier: ColumnSplitReduction
// Column sums of a row-major matrix with the column index along y (blockDim.x == 1).
__global__ void column_sum_y(const float *mat, float *sums, int nrows, int ncols)
{
    const int c = blockIdx.y * blockDim.y + threadIdx.y;
    if (c < ncols) {
        float acc = 0.0f;
        for (int r = 0; r < nrows; ++r)
            acc += mat[r * ncols + c];
        sums[c] = acc;
    }
}
