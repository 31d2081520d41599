// 2-D "valid" convolution (cross-correlation) of a single-channel image with a 3x3 filter.
#include <cuda_runtime.h>

__global__ void conv2d_valid3x3(const float *img, const float *kern, float *res, int H, int W)
{
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    int OW = W - 2, OH = H - 2;
    if (ox < OW && oy < OH) {
        float s = 0.0f;
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
                s += kern[ky * 3 + kx] * img[(oy + ky) * W + ox + kx];
        res[oy * OW + ox] = s;
    }
}
