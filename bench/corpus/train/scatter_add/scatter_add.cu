// dst[dst_index[i]] += src[i] with float atomics (many sources per destination).
#include <cuda_runtime.h>

__global__ void scatter_add(const float *src, const int *dst_index, float *dst, int n, int dst_size)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&dst[dst_index[i]], src[i]);
}
