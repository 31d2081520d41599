// 256-bin byte histogram: one global atomic per input byte.
#include <cuda_runtime.h>

__global__ void byte_histogram(const unsigned char *bytes, unsigned int *counts, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&counts[bytes[i]], 1u);
    }
}

void launch_byte_histogram(const unsigned char *bytes, unsigned int *counts, int n)
{
    byte_histogram<<<(n + 255) / 256, 256>>>(bytes, counts, n);
}
