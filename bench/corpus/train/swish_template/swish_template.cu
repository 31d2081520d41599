// Swish / SiLU, x * sigmoid(x), as a template instantiated for float: one thread per element.
#include <cuda_runtime.h>

template <typename T>
__global__ void swish(const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = x[i];
        y[i] = v / (T(1) + exp(-v));
    }
}

template __global__ void swish<float>(const float *, float *, int);
