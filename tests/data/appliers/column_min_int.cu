// applier: ColumnSplitReduction
// Smallest value of each column of an int matrix, with a comparison update.
__global__ void column_min(const int *grid, int *lowest, int height, int width)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < width) {
        int lo = grid[col];
        for (int row = 1; row < height; row++) {
            if (grid[row * width + col] < lo) lo = grid[row * width + col];
        }
        lowest[col] = lo;
    }
}
