// applier: GroupPerRow
// Squared norm of each row of a double matrix, written with a while loop.
__global__ void row_norm2(const double *m, double *norm2, int nrows, int ncols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows) return;
    double acc = 0.0;
    int c = 0;
    while (c < ncols) {
        const double e = m[(long long)r * ncols + c];
        acc += e * e;
        c++;
    }
    norm2[r] = acc;
}
