// applier: ParallelScan
// Inclusive double scan; every thread but the first leaves at once; size_t index.
__global__ void cumsum_d(const double *x, double *y, size_t n)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    double running = 0.0;
    for (size_t k = 0; k < n; k++) {
        running += x[k];
        y[k] = running;
    }
}
