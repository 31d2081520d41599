// applier: ParallelScan
// Loop counts remaining elements down; the index is derived from the counter.
__global__ void scan_countdown(const double *in, double *out, int n)
{
    double acc = 0.0;
    for (int left = n; left > 0; --left) {
        int i = n - left;
        acc += in[i];
        out[i] = acc;
    }
}
