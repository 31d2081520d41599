// Fourth-order 1-D second derivative with constant coefficients on a float array; the two
// points at each end are copied unchanged.
#include <cuda_runtime.h>

#define R 2

__global__ void d2_fourth_order(const float *f, float *d2f, unsigned int n, float inv_h2)
{
    unsigned int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n)
        return;
    if (i >= R && i + R < n)
        d2f[i] = inv_h2 * (-2.5f * f[i] + (4.0f / 3.0f) * (f[i - 1] + f[i + 1]) - (1.0f / 12.0f) * (f[i - 2] + f[i + 2]));
    else
        d2f[i] = f[i];
}
