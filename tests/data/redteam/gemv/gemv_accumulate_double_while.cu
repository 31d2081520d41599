// y += A x in double, a while loop over the row with a pointer into A, early return.
// applier: GroupPerRow
__global__ void dgemv_acc(const double *A, const double *x, double *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const double *a = A + (size_t)r * cols;
    double s = 0.0;
    int k = 0;
    while (k < cols) {
        s += a[k] * x[k];
        k++;
    }
    y[r] += s;
}
