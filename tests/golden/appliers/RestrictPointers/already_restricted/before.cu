// A clamp whose pointers already promise not to alias.
#include <cuda_runtime.h>

__global__ void clamp_to(const float *__restrict__ in, float *__restrict__ out, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = fminf(fmaxf(in[i], lo), hi);
    }
}
