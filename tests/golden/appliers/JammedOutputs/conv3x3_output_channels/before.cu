// 3x3 convolution with cin input and cout output channels (CHW), bias, zero padding: one
// thread per output pixel, blockIdx.z the output channel.
#include <cuda_runtime.h>

__global__ void conv3x3_mc(const float *in, const float *weight, const float *bias, float *out,
                           int cin, int cout, int h, int w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int oc = blockIdx.z;
    if (x >= w || y >= h || oc >= cout)
        return;
    float acc = bias[oc];
    for (int ic = 0; ic < cin; ++ic)
        for (int ky = 0; ky < 3; ++ky) {
            int iy = y + ky - 1;
            if (iy < 0 || iy >= h)
                continue;
            for (int kx = 0; kx < 3; ++kx) {
                int ix = x + kx - 1;
                if (ix < 0 || ix >= w)
                    continue;
                acc += in[(ic * h + iy) * w + ix] * weight[((oc * cin + ic) * 3 + ky) * 3 + kx];
            }
        }
    out[(oc * h + y) * w + x] = acc;
}
