// Softplus log(1 + exp(x)) of a double vector indexed with 64-bit integers.
#include <cuda_runtime.h>

__global__ void softplus(const double *in, double *out, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = log(1.0 + exp(in[i]));
}
