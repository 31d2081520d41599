// Horner's rule with a count-down loop over the coefficients (degree `deg`).
#include <cuda_runtime.h>

__global__ void horner(const float *coef, const float *x, float *y, int deg, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float p = 0.0f;
        #pragma unroll 4
        for (int walk_up = 0; walk_up < (deg) - (0) + 1; ++walk_up) {
 const int k = (deg) - walk_up;
            p = p * x[i] + coef[k];
        }
        y[i] = p;
    }
}
