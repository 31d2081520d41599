// In-place inclusive prefix sum of a float array, launched on a single thread: x[i] += x[i - 1].
#include <cuda_runtime.h>

__global__ void cumsum_in_place(float *x, int n)
{
    for (int i = 1; i < n; i++)
        x[i] += x[i - 1];
}
