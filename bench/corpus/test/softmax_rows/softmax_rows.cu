// Numerically stable softmax of every row: one thread per row, three passes over the row.
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmax_rows(const float *x, float *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols;
    float mx = -INFINITY;
    for (int c = 0; c < cols; ++c)
        mx = fmaxf(mx, xr[c]);
    float denom = 0.0f;
    for (int c = 0; c < cols; ++c)
        denom += expf(xr[c] - mx);
    for (int c = 0; c < cols; ++c)
        yr[c] = expf(xr[c] - mx) / denom;
}
