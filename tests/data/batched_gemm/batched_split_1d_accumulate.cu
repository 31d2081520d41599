// Batched y[m] += x[m] * w[m] with runtime sizes: one block per matrix along grid y, its 1-D
// threads split into (row, col) by the column count.
#include <cuda_runtime.h>

__global__ void bmm_split(const float *x, const float *w, float *y, int n_mats, int rows, int cols, int inner) {
    unsigned int m = blockIdx.y;
    unsigned int i = threadIdx.x / cols;
    unsigned int j = threadIdx.x % cols;
    if (m < n_mats && i < rows) {
        float v = 0.0f;
        for (int q = 0; q < inner; ++q)
            v += x[(m * rows + i) * inner + q] * w[(m * inner + q) * cols + j];
        y[(m * rows + i) * cols + j] += v;
    }
}
