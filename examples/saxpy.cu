// saxpy: y = a * x + y, written the way a first CUDA program usually is.
#include <cuda_runtime.h>
#include <math.h>

__global__ void saxpy(int n, float a, float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i] * 1.0;
    }
}

void run_saxpy(int n, float a, float *d_x, float *d_y)
{
    saxpy<<<(n + 99) / 100, 100>>>(n, a, d_x, d_y);
}
