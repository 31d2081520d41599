// 0.5 * relu(x) already written in single precision: nothing for fast math to change.
#include <cuda_runtime.h>

__global__ void half_relu(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 0.5f * fmaxf(x[i], 0.0f);
    }
}
