// applier: ColumnSplitReduction
// y = A v in double precision with A column-major (leading dimension lda): thread r walks row r
// across the columns with a while loop, so the warp reads adjacent rows of one column per step.
__global__ void dgemv_cm(const double *a, int lda, const double *v, double *out, int nrows, int ncols)
{
    int r = threadIdx.x + blockIdx.x * blockDim.x;
    if (r < nrows) {
        double acc = 0.0;
        int c = 0;
        while (c < ncols) {
            const double w = v[c];
            acc += a[r + (long long)c * lda] * w;
            ++c;
        }
        out[r] = acc;
    }
}
