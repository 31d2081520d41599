// Gaussian weights exp(-d^2 / 2) / (sigma sqrt(2 pi)), written with double literals and the
// double math functions although everything is float.
#include <cuda_runtime.h>
#include <math.h>

__global__ void gaussian_weights(const float *x, float *w, float sigma, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float d = x[i] / sigma;
        w[i] = exp(-0.5 * d * d) / (sigma * sqrt(2.0 * 3.14159265));
    }
}
