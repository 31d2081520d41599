// Histogram of samples in [0, 1) into NBINS uint64_t counters, the bin clamped with min/max, the
// counter addressed as hist + bin.
#include <cstdint>
#define NBINS 512

__global__ void sample_histogram(const float *samples, uint64_t *hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int bin = min(max((int)(samples[i] * NBINS), 0), NBINS - 1);
    atomicAdd((unsigned long long int *)(hist + bin), 1ull);
}
