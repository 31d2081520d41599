// applier: ParallelScan
// Exclusive scan of doubles as a recurrence, on a <<<1, 1>>> launch: out[i] = out[i - 1] + in[i - 1].
__global__ void exclusive_recurrence(const double *in, double *out, int n)
{
    if (n <= 0) return;
    out[0] = 0.0;
    for (int i = 1; i < n; ++i) {
        out[i] = out[i - 1] + in[i - 1];
    }
}
