// applier: ParallelScan
// Inclusive scan of unsigned counts; every thread but the first of the grid leaves at once.
__global__ void cumulative_counts(const unsigned int *counts, unsigned int *cumulative, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid != 0) return;
    unsigned int acc = 0u;
    for (int i = 0; i < n; i++) {
        acc += counts[i];
        cumulative[i] = acc;
    }
}
