// Sum of an int array: every thread adds its element straight into the result.
#include <cuda_runtime.h>

__global__ void total_of_values(const int *values, int *total, int n)
{
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    if (tid < n)
        atomicAdd(total, values[tid]);
}
