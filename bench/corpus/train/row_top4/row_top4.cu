// The 4 largest values of every row with their column indices, in descending order (earlier
// column first on ties): one thread per row keeps a sorted list in registers/local memory.
#include <cuda_runtime.h>
#include <math.h>

#define K 4

__global__ void row_topk(const float *x, float *top_val, int *top_idx, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float v[K];
    int id[K];
    for (int q = 0; q < K; q++) {
        v[q] = -INFINITY;
        id[q] = -1;
    }
    for (int c = 0; c < cols; c++) {
        float e = x[r * cols + c];
        if (e > v[K - 1]) {
            int q = K - 1;
            while (q > 0 && v[q - 1] < e) {
                v[q] = v[q - 1];
                id[q] = id[q - 1];
                q--;
            }
            v[q] = e;
            id[q] = c;
        }
    }
    for (int q = 0; q < K; q++) {
        top_val[r * K + q] = v[q];
        top_idx[r * K + q] = id[q];
    }
}
