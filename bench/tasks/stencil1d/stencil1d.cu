// 7-point 1-D stencil with fixed weights; edges clamp to the array.
#include <cuda_runtime.h>

__global__ void stencil1d(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float w[7] = {0.05, 0.1, 0.2, 0.3, 0.2, 0.1, 0.05};
        float s = 0.0;
        for (int k = 0; k < 7; k++) {
            int j = min(max(i + k - 3, 0), n - 1);
            s += w[k] * in[j];
        }
        out[i] = s;
    }
}

void launch_stencil1d(const float *in, float *out, int n)
{
    stencil1d<<<(n + 127) / 128, 128>>>(in, out, n);
}
