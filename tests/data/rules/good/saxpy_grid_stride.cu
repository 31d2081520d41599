// saxpy with restrict-qualified pointers, float literals and a grid-stride loop.
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i] * 1.0f;
    }
}

void run_saxpy(int n, float a, const float *d_x, float *d_y, int blocks)
{
    const int threads = 256;
    saxpy<<<blocks, threads>>>(n, a, d_x, d_y);
}
