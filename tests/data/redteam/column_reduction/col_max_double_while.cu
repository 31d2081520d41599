// Column maxima of a double matrix: a while loop down the rows, early return.
// applier: ColumnSplitReduction
__global__ void colmax_f64(const double *m, double *out, int nr, int nc)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= nc) return;
    double hi = m[col];
    int row = 1;
    while (row < nr) {
        double v = m[row * nc + col];
        if (v > hi) hi = v;
        row++;
    }
    out[col] = hi;
}
