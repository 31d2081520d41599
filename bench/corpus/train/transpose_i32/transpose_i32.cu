// Transpose of an int matrix, output first in the parameter list, unsigned 2-D indices.
#include <cuda_runtime.h>

__global__ void transpose_i32(int *out, const int *in, int height, int width)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        out[x * height + y] = in[y * width + x];
}
