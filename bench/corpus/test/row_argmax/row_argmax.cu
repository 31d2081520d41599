// Column index of the largest score of every row (the first one on ties): one thread per row.
#include <cuda_runtime.h>

__global__ void argmax_per_row(const float *scores, int *best_idx, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    int arg = 0;
    float best = scores[(size_t)r * cols];
    for (int c = 1; c < cols; c++) {
        float v = scores[(size_t)r * cols + c];
        if (v > best) {
            best = v;
            arg = c;
        }
    }
    best_idx[r] = arg;
}
