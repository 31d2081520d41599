// applier: ParallelScan
// Exclusive scan of doubles by one thread, element index kept in a size_t.
__global__ void exclusive_scan_f64(const double *src, double *dst, unsigned int n)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        double sum = 0.0;
        for (unsigned int k = 0; k < n; k++) {
            const double v = src[k];
            dst[k] = sum;
            sum += v;
        }
    }
}
