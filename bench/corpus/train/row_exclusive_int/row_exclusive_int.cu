// Exclusive prefix sum of every row of an int matrix (e.g. counts to offsets): one thread per row.
#include <cuda_runtime.h>

__global__ void exclusive_scan_rows(const int *counts, int *offsets, int nrows, int width)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows)
        return;
    const int *in = counts + r * width;
    int *out = offsets + r * width;
    int acc = 0;
    for (int c = 0; c < width; ++c) {
        int v = in[c];
        out[c] = acc;
        acc += v;
    }
}
