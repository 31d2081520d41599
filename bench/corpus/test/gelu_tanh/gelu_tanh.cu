// GELU activation (tanh approximation) of every element: one thread per element.
#include <cuda_runtime.h>
#include <math.h>

__global__ void gelu_tanh(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}

void launch_gelu_tanh(const float *x, float *y, int n)
{
    gelu_tanh<<<(n + 255) / 256, 256>>>(x, y, n);
}
