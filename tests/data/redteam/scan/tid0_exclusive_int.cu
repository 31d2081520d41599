// applier: ParallelScan
// Exclusive scan of int counts, global thread 0 does it, a separate running sum.
__global__ void exclusive_scan(const int *counts, int *offsets, int n)
{
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    if (tid == 0) {
        int sum = 0;
        for (int i = 0; i < n; ++i) {
            offsets[i] = sum;
            sum += counts[i];
        }
    }
}
