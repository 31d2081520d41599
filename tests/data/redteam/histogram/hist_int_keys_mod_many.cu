// Histogram of int keys into 4096 bins (a macro), bin = key modulo the bin count.
// applier: PrivatisedHistogram
#define NBINS 4096

__global__ void key_hist(const int *keys, unsigned int *counts, int n)
{
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) {
        int k = keys[tid];
        unsigned bin = (unsigned)k % NBINS;
        atomicAdd(&counts[bin], 1u);
    }
}
