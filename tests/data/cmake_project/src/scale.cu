#include "proj/scale.cuh"

__global__ void scale(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = proj_scale(in[i]);
    }
}

void launch_scale(float* out, const float* in, int n) {
    scale<<<(n + 255) / 256, 256>>>(out, in, n);
}
