// Sum of a zero-terminated run per thread: a while loop, no counted for loop to unroll.
#include <cuda_runtime.h>

__global__ void run_sums(const int *values, const int *starts, int *sums, int runs)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < runs) {
        const int *p = values + starts[r];
        int s = 0;
        while (*p != 0) {
            s += *p;
            ++p;
        }
        sums[r] = s;
    }
}
