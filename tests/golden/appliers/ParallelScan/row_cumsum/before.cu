// applier: ParallelScan
// Inclusive prefix sum of every row, one thread per row.
__global__ void row_cumsum(const float *x, float *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float run = 0.0f;
        for (int c = 0; c < cols; c++) {
            run += x[r * cols + c];
            y[r * cols + c] = run;
        }
    }
}
