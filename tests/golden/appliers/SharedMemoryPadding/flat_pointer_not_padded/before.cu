// A 32 x 32 shared tile also read through a flat pointer: a padded column would shift
// every flat index, so the tile must keep its layout.
#include <cuda_runtime.h>

__global__ void tile_reverse(const float *in, float *out, int n)
{
    __shared__ float tile[32][32];
    int base = blockIdx.x * 1024;
    int t = threadIdx.y * 32 + threadIdx.x;
    if (base + t < n)
        tile[threadIdx.y][threadIdx.x] = in[base + t];
    __syncthreads();
    const float *flat = &tile[0][0];
    if (base + t < n)
        out[base + t] = flat[1023 - t];
}
