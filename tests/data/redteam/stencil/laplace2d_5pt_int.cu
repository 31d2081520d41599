// applier: RegisterColumnStencil or HaloTiledStencil
// Integer 5-point Laplacian on the interior, `row`/`col` names, rows on y, conjunctive guard.
__global__ void laplace_int(const int *grid, int *lap, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row > 0 && col > 0 && row < rows - 1 && col < cols - 1) {
        int center = grid[row * cols + col];
        lap[row * cols + col] = grid[(row - 1) * cols + col] + grid[(row + 1) * cols + col]
                              + grid[row * cols + col - 1] + grid[row * cols + col + 1] - 4 * center;
    }
}
