// z = a*x + b*y on int vectors, with an unsigned index.
#include <cuda_runtime.h>

__global__ void axpby_int(int a, const int *x, int b, const int *y, int *z, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i] = a * x[i] + b * y[i];
}
