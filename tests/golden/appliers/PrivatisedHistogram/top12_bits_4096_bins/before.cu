// Histogram of the top 12 bits of 32-bit keys (4096 bins), one global atomic per key.
#include <cuda_runtime.h>

__global__ void histogram_top12(const unsigned int *vals, unsigned int *bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(bins + (vals[i] >> 20), 1u);
}
