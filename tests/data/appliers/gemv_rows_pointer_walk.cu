// applier: GroupPerRow
// y = A x for a row-major A: thread r walks one pointer along its row and one along x.
__global__ void gemv_rows_walk(const double *A, const double *x, double *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const double *a = A + (long long)r * cols;
        const double *b = x;
        double s = 0.0;
        for (int k = 0; k < cols; k++) {
            s += *a * *b;
            ++a;
            ++b;
        }
        y[r] = s;
    }
}
