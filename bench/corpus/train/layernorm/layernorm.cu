// LayerNorm of every row (mean, variance, scale and shift): one thread per row, three passes.
#include <cuda_runtime.h>

__global__ void layer_norm(const float *x, const float *gamma, const float *beta, float *y,
                           int n_rows, int n_cols, float eps)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n_rows)
        return;
    const float *xr = &x[row * n_cols];
    float mean = 0.f;
    for (int j = 0; j < n_cols; j++)
        mean += xr[j];
    mean /= n_cols;
    float var = 0.f;
    for (int j = 0; j < n_cols; j++) {
        float d = xr[j] - mean;
        var += d * d;
    }
    var /= n_cols;
    float inv = 1.0f / sqrtf(var + eps);
    for (int j = 0; j < n_cols; j++)
        y[row * n_cols + j] = (xr[j] - mean) * inv * gamma[j] + beta[j];
}
