// Brighten a width x height image, one thread per pixel on a 2-D grid of 32 x 8 blocks.
#include <cuda_runtime.h>

__global__ void brighten(const unsigned char *in, unsigned char *out, int width, int height, int add)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        int v = in[y * width + x] + add;
        out[y * width + x] = v > 255 ? 255 : v;
    }
}
