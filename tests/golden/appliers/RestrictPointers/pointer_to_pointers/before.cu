// Scales rows reached through an array of row pointers: a pointer to pointers, which
// __restrict__ on the outer pointer would not describe.
#include <cuda_runtime.h>

__global__ void scale_rows(float **rows, int cols, float s, int nrows)
{
    int r = blockIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < nrows && c < cols) {
        rows[r][c] *= s;
    }
}
