// Rotates a height x width image 90 degrees clockwise into a width x height image.
#include <cuda_runtime.h>

__global__ void rotate_cw(const float *img, float *rot, int height, int width)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        rot[x * height + (height - 1 - y)] = img[y * width + x];
}
