// A dot product of 16-vectors whose loop is already unrolled by a pragma.
#include <cuda_runtime.h>

__global__ void dot16(const float *a, const float *b, float *out, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            s += a[v * 16 + k] * b[v * 16 + k];
        }
        out[v] = s;
    }
}
