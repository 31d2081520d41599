// The largest element of an int array: each block takes the maximum of its 512 values in
// shared memory with sequential addressing, then one atomicMax per block into the result.
#include <cuda_runtime.h>
#include <climits>

__global__ void max_i32(const int *values, int *result, int n)
{
    __shared__ int top[512];
    int lane = threadIdx.x;
    int i = blockIdx.x * 512 + lane;
    int v = INT_MIN;
    if (i < n)
        v = values[i];
    top[lane] = v;
    __syncthreads();
    for (int half = 256; half > 0; half >>= 1) {
        if (lane < half)
            top[lane] = top[lane + half] > top[lane] ? top[lane + half] : top[lane];
        __syncthreads();
    }
    if (lane == 0)
        atomicMax(result, top[0]);
}
