// Index of the first negative element (n if none): every thread whose element is negative
// lowers the answer with atomicMin.
#include <cuda_runtime.h>

__global__ void first_negative(const float *x, int *first, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.0f)
        atomicMin(first, i);
}
