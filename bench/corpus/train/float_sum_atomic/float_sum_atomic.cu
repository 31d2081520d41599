// Sum of a float array, every element added to the result with its own atomic.
#include <cuda_runtime.h>

__global__ void sum_all(const float *data, float *result, int count)
{
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= count)
        return;
    atomicAdd(&result[0], data[gid]);
}
