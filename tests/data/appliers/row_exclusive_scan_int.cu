// applier: ParallelScan
// Exclusive prefix sum of each row of counts (offsets), written before the update.
__global__ void row_offsets(const int *counts, int *offsets, int segments, int len)
{
    int s = threadIdx.x + blockIdx.x * blockDim.x;
    if (s >= segments) return;
    int total = 0;
    for (int k = 0; k < len; ++k) {
        offsets[s * len + k] = total;
        total += counts[s * len + k];
    }
}
