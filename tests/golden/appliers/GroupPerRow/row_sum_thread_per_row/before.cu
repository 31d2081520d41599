// Sum of each row of a rows x cols matrix: one thread walks a whole row.
#include <cuda_runtime.h>

__global__ void row_sum(const float *m, float *sums, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float s = 0.0f;
        for (int j = 0; j < cols; j++) {
            s += m[row * cols + j];
        }
        sums[row] = s;
    }
}

void launch_row_sum(const float *m, float *sums, int rows, int cols)
{
    row_sum<<<(rows + 255) / 256, 256>>>(m, sums, rows, cols);
}
