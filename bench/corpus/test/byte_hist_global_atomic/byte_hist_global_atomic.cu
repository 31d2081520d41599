// Histogram of the byte values of a buffer: one thread per byte, every count bumped with a global
// atomic on one of 256 bins.
#include <cuda_runtime.h>

__global__ void byte_histogram(const unsigned char *bytes, unsigned int *bins, int length)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < length)
        atomicAdd(&bins[bytes[k]], 1u);
}
