// Histogram of keys into `nbins` bins, a count known only at run time: no shared array of
// the right size can be declared.
#include <cuda_runtime.h>

__global__ void key_histogram(const int *keys, unsigned int *counts, int nbins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&counts[keys[i] % nbins], 1u);
}
