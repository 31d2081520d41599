// L1 norm of a float vector: each block sums |x| of its 256 elements in shared memory with
// interleaved addressing (a modulo test per step), then adds its partial to the result atomically.
#include <cuda_runtime.h>

__global__ void l1_norm(const float *x, float *norm, int n)
{
    __shared__ float partial[256];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[t] = (i < n) ? fabsf(x[i]) : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (t % (2 * s) == 0)
            partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(norm, partial[0]);
}
