// applier: ParallelScan
// Exclusive scan as a shifted recurrence: out[0] = 0, out[i] = out[i-1] + in[i-1].
__global__ void excl_scan(const int *in, int *out, int n)
{
    out[0] = 0;
    for (int i = 1; i < n; ++i)
        out[i] = out[i - 1] + in[i - 1];
}
