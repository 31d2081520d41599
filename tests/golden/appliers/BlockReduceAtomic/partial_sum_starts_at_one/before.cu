// Per-thread partial sums that start at 1 instead of 0, added into one total: a block
// reduction would add the 1 once per block instead of once per thread.
#include <cuda_runtime.h>

__global__ void offset_sum(const float *in, float *total, int n)
{
    float partial = 1.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        partial += in[i];
    atomicAdd(total, partial);
}
