// Genuinely double-precision code: double literals and sqrt are what it means.
#include <cuda_runtime.h>
#include <math.h>

__global__ void norm(const double *__restrict__ v, double *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] = sqrt(v[i] * v[i] + 1.0);
    }
}

__global__ void scale(float *__restrict__ y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = sqrtf(y[i]) * 0.5f + 1e-3f;
    }
}
