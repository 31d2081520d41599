// Histogram of non-negative int keys into a handful of bins (key modulo the bin count),
// one global atomic per key.
#include <cuda_runtime.h>

__global__ void small_histogram(const int *keys, unsigned int *hist, int n, int nbins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[keys[i] % nbins], 1u);
}
