// 3-point 1-D stencil (radius 1) with the weights written out, interior points only.
#include <cuda_runtime.h>

__global__ void blur3(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i < n - 1)
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}
