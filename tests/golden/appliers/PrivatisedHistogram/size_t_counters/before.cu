// Histogram of the high nibble of bytes into size_t counters (16 bins): size_t has no atomicAdd of
// its own, so the counter is added through unsigned long long.
#include <cstddef>

__global__ void nibble_histogram(const unsigned char *data, size_t *counts, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd((unsigned long long *)&counts[data[i] >> 4], 1ULL);
}
