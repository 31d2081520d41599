// In-place update y += x with C linkage: x is only read (const is added), y is written.
#include <cuda_runtime.h>

extern "C" __global__ void accumulate(float *y, float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] += x[i];
    }
}
