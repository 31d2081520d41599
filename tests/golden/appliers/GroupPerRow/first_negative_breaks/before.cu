// Index of the first negative entry of each row (or cols): the row walk stops early on the
// data, so the row cannot be split among the threads of a group.
#include <cuda_runtime.h>

__global__ void first_negative(const float *m, int *where, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int found = cols;
        for (int j = 0; j < cols; j++) {
            if (m[row * cols + j] < 0.0f) {
                found = j;
                break;
            }
        }
        where[row] = found;
    }
}
