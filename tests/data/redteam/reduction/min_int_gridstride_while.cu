// Minimum of an int array: grid-stride while loop, a register minimum, one atomicMin per thread.
// applier: BlockReduceAtomic
#include <climits>

__global__ void array_min(const int *__restrict__ data, int *result, long long count)
{
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long step = (long long)gridDim.x * blockDim.x;
    int lo = INT_MAX;
    while (k < count) {
        int v = data[k];
        if (v < lo)
            lo = v;
        k += step;
    }
    atomicMin(result, lo);
}
