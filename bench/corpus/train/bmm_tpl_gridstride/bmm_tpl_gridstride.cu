// Batched products of ROWS x DEPTH by DEPTH x COLS float matrices, all three sizes template
// parameters: a fixed grid of blocks walks the batch, one matrix at a time per block, and the
// block's 1-D threads are split into (row, col) by the column count.
#include <cuda_runtime.h>

template <int ROWS, int COLS, int DEPTH>
__global__ void bmm_walk(const float *lhs, const float *rhs, float *out, int nbatch)
{
    for (int m = blockIdx.x; m < nbatch; m += gridDim.x) {
        int r = threadIdx.x / COLS;
        int c = threadIdx.x % COLS;
        float total = 0.0f;
        for (int d = 0; d < DEPTH; d++)
            total = fmaf(lhs[(m * ROWS + r) * DEPTH + d], rhs[(m * DEPTH + d) * COLS + c], total);
        out[(m * ROWS + r) * COLS + c] = total;
    }
}

template __global__ void bmm_walk<8, 16, 32>(const float *, const float *, float *, int);
