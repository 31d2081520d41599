// RMSNorm of every row with a learned scale: one thread normalises one row.
#include <cuda_runtime.h>

__global__ void rmsnorm(const float *in, const float *weight, float *out, int rows, int hidden, float eps)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float *src = in + (long)row * hidden;
        float sumsq = 0.0f;
        for (int i = 0; i < hidden; i++)
            sumsq += src[i] * src[i];
        float scale = rsqrtf(sumsq / hidden + eps);
        for (int i = 0; i < hidden; i++)
            out[(long)row * hidden + i] = src[i] * scale * weight[i];
    }
}
