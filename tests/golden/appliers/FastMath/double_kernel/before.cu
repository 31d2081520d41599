// y = a * x + y in double precision: its literal and sqrt mean double.
#include <cuda_runtime.h>
#include <math.h>

__global__ void scaled_norm_step(const double *x, double *y, double a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * sqrt(x[i] * x[i] + 1.0) + y[i];
    }
}
