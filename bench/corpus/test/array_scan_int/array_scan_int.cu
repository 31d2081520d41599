// Inclusive prefix sum of a whole int array by a single block: every thread scans its own
// contiguous chunk, then adds the totals of all the chunks before it.
#include <cuda_runtime.h>

__global__ void scan_whole_array(const int *in, int *out, int n)
{
    int t = threadIdx.x;
    int chunk = (n + blockDim.x - 1) / blockDim.x;
    int begin = t * chunk;
    int end = min(begin + chunk, n);
    int sum = 0;
    for (int i = begin; i < end; i++) {
        sum += in[i];
        out[i] = sum;
    }
    __syncthreads();
    int offset = 0;
    for (int k = 0; k < t; k++) {
        int last = min((k + 1) * chunk, n) - 1;
        if (last >= k * chunk)
            offset += out[last];
    }
    __syncthreads();
    for (int i = begin; i < end; i++)
        out[i] += offset;
}
