// 3x3 convolution with cin input and cout output channels (CHW), bias, zero padding: one
// thread per output pixel, blockIdx.z the output channel.
#include <cuda_runtime.h>

__global__ void conv3x3_mc(const float *__restrict__ in, const float *__restrict__ weight, const float *__restrict__ bias, float *__restrict__ out,
                           int cin, int cout, int h, int w)
{
    // 4 outputs per thread along oc: the loads that do not depend on it are shared.
    const int oc_first_rg = blockIdx.z * 4;
    int x = blockIdx.x * blockDim.x + threadIdx.x; int y = blockIdx.y * blockDim.y + threadIdx.y; int oc = oc_first_rg;
    if (!(!(x >= w || y >= h || oc >= cout))) return;
    const int oc_0_rg = oc_first_rg;
    const int oc_1_rg = (oc_first_rg + 1 < cout ? oc_first_rg + 1 : cout - 1);
    const int oc_2_rg = (oc_first_rg + 2 < cout ? oc_first_rg + 2 : cout - 1);
    const int oc_3_rg = (oc_first_rg + 3 < cout ? oc_first_rg + 3 : cout - 1);
    float acc_0_rg = bias[oc_0_rg];
    float acc_1_rg = bias[oc_1_rg];
    float acc_2_rg = bias[oc_2_rg];
    float acc_3_rg = bias[oc_3_rg];
    for (int ic = 0; ic < cin; ++ic) {
        for (int ky = 0; ky < 3; ++ky) {
            int iy = y + ky - 1;
            if (iy < 0 || iy >= h)
                continue;
            for (int kx = 0; kx < 3; ++kx) {
                int ix = x + kx - 1;
                if (ix < 0 || ix >= w)
                    continue;
                acc_0_rg += in[(ic * h + iy) * w + ix] * weight[((oc_0_rg * cin + ic) * 3 + ky) * 3 + kx];
                acc_1_rg += in[(ic * h + iy) * w + ix] * weight[((oc_1_rg * cin + ic) * 3 + ky) * 3 + kx];
                acc_2_rg += in[(ic * h + iy) * w + ix] * weight[((oc_2_rg * cin + ic) * 3 + ky) * 3 + kx];
                acc_3_rg += in[(ic * h + iy) * w + ix] * weight[((oc_3_rg * cin + ic) * 3 + ky) * 3 + kx];
            }
        }
    }
    out[(oc_0_rg * h + y) * w + x] = acc_0_rg;
    if (oc_first_rg + 1 < cout) out[(oc_1_rg * h + y) * w + x] = acc_1_rg;
    if (oc_first_rg + 2 < cout) out[(oc_2_rg * h + y) * w + x] = acc_2_rg;
    if (oc_first_rg + 3 < cout) out[(oc_3_rg * h + y) * w + x] = acc_3_rg;
}
