// Histogram of floats in [0, 1) into nbins equal bins (clamped), int counters.
#include <cuda_runtime.h>

__global__ void histogram_unit_interval(const float *samples, int *counts, int n, int nbins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int b = (int)(samples[i] * nbins);
    if (b >= nbins)
        b = nbins - 1;
    if (b < 0)
        b = 0;
    atomicAdd(&counts[b], 1);
}
