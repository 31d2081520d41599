// c = a + b over n floats, one element per thread, block size picked by habit.
#include <cuda_runtime.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    for (long long i_rg = (long long)blockIdx.x * blockDim.x + threadIdx.x; i_rg < (long long)(n); i_rg += (long long)blockDim.x * gridDim.x) {
        int i = (int)i_rg; 
        if (i < n) {
            c[i] = a[i] + b[i];
        }
    }
}

void launch_vector_add(const float *a, const float *b, float *c, int n)
{
    vector_add<<<(n + 63) / 64, 64>>>(a, b, c, n);
}
