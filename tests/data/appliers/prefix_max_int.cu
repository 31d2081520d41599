// applier: ParallelScan
// Highest value so far, over a signed integer series, written with a comparison and an early return.
#include <climits>

__global__ void highest_so_far(const int *values, int *highest, int count)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= count) return;
    int best = INT_MIN;
    for (int j = 0; j <= i; j++) {
        if (values[j] > best) best = values[j];
    }
    highest[i] = best;
}
