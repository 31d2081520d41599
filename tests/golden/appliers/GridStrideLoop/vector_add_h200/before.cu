// c = a + b over n floats, one element per thread, block size picked by habit.
#include <cuda_runtime.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

void launch_vector_add(const float *a, const float *b, float *c, int n)
{
    vector_add<<<(n + 63) / 64, 64>>>(a, b, c, n);
}
