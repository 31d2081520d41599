// Gaussian weights exp(-d^2 / 2) / (sigma sqrt(2 pi)), written with double literals and the
// double math functions although everything is float.
#include <cuda_runtime.h>
#include <math.h>

__global__ void gaussian_weights(const float *x, float *w, float sigma, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float d = x[i] / sigma;
        w[i] = __expf(-0.5f * d * d) / (sigma * sqrtf(2.0f * 3.14159265f));
    }
}
