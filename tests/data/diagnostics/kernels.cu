// Test data for the language server end-to-end tests: two kernels, a device helper, launches.
#include <cuda_runtime.h>

__device__ float twice(float v) { return 2.0f * v; }

__global__ void scale(int n, float a, float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i] * 1.0;
    }
}

__global__ void strided_copy(float *out, float *in, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = twice(in[i * stride]);
    }
}

void run(int n, float a, float *d_x, float *d_y)
{
    /* π ≈ 3.14 😀 */ scale<<<(n + 99) / 100, 100>>>(n, a, d_x, d_y);
    for (int s = 1; s < 4; ++s) {
        strided_copy<<<(n + 255) / 256, 256>>>(d_y, d_x, n, s);
    }
}
