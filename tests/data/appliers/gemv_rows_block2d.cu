// applier: GroupPerRow
// y = A x for a row-major A: 32 x 8 blocks, the row is the thread's linear id in a 1-D grid.
__global__ void gemv_rows_2dblock(const float *A, const float *x, float *y, int m, int n)
{
    int tid = threadIdx.y * blockDim.x + threadIdx.x;
    int row = blockIdx.x * (blockDim.x * blockDim.y) + tid;
    if (row < m) {
        float s = 0.0f;
        for (int k = 0; k < n; ++k)
            s += A[row * n + k] * x[k];
        y[row] = s;
    }
}
