// Horner's rule with a count-down loop over the coefficients (degree `deg`).
#include <cuda_runtime.h>

__global__ void horner(const float *coef, const float *x, float *y, int deg, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float p = 0.0f;
        for (int k = deg; k >= 0; --k) {
            p = p * x[i] + coef[k];
        }
        y[i] = p;
    }
}
