// 9-point 1-D stencil (radius 4) with weights from memory; zero outside the array.
#include <cuda_runtime.h>

#define RADIUS 4

__global__ void stencil_1d(const float *in, const float *w, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = 0.0f;
    for (int o = -RADIUS; o <= RADIUS; ++o) {
        int j = i + o;
        if (j >= 0 && j < n)
            s += w[o + RADIUS] * in[j];
    }
    out[i] = s;
}
