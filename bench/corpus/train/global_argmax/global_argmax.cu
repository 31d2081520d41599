// Index of the largest non-negative value of an array: (value bits, index) packed into 64 bits
// and combined with atomicMax (the largest index wins a tie).
#include <cuda_runtime.h>

__global__ void argmax_global(const float *v, unsigned long long *best, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long key = ((unsigned long long)__float_as_uint(v[i]) << 32) | (unsigned int)i;
        atomicMax(best, key);
    }
}
