// applier: GroupPerRow
// Largest magnitude per row of a double matrix, rows visited by a grid-stride loop.
__global__ void row_absmax(const double *a, double *amax, int nr, int nc)
{
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < nr; row += blockDim.x * gridDim.x) {
        double best = 0.0;
        for (int col = 0; col < nc; ++col) {
            double v = fabs(a[(long long)row * nc + col]);
            best = v > best ? v : best;
        }
        amax[row] = best;
    }
}
