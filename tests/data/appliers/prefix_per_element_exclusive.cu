// applier: ParallelScan
// Each thread sums the doubles before its own position (an O(n^2) exclusive scan), early return.
__global__ void exclusive_by_thread(const double *w, double *excl, int n)
{
    const int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t >= n) return;
    double s = 0.0;
    for (int j = 0; j < t; j++)
        s = s + w[j];
    excl[t] = s;
}
