// The L1 norm of a float vector (sum of |x|): each block sums its 256 magnitudes in shared
// memory with interleaved addressing, then adds its partial to the result with atomicAdd.
#include <cuda_runtime.h>

__global__ void abs_sum(const float *x, float *result, int count)
{
    __shared__ float partial[256];
    unsigned int t = threadIdx.x;
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    partial[t] = (gid < count) ? fabsf(x[gid]) : 0.0f;
    __syncthreads();
    for (unsigned int step = 1; step < blockDim.x; step *= 2) {
        if (t % (2 * step) == 0)
            partial[t] += partial[t + step];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(result, partial[0]);
}
