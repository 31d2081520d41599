// Already a grid-stride loop: inverting bytes of an image of n pixels.
#include <cuda_runtime.h>

__global__ void invert(const unsigned char *in, unsigned char *out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = 255 - in[i];
}
