// Per-block partial sums through a 256-float shared buffer: the block size is baked into
// the shared array and the tree, so the launch must keep 256 threads.
#include <cuda_runtime.h>

__global__ void block_sums(const float *in, float *partial, int n)
{
    __shared__ float buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = buf[0];
}
