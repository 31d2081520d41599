// The largest element of an int array: per-block maxima through a sequential-addressing tree
// with max(), then one atomicMax per block into the result.
// applier: BlockReduceAtomic
#include <climits>

__global__ void array_max(const int *a, int *result, int n)
{
    __shared__ int best[256];
    int tid = threadIdx.x;
    int gid = blockIdx.x * blockDim.x + tid;
    best[tid] = gid < n ? a[gid] : INT_MIN;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            best[tid] = max(best[tid], best[tid + s]);
        __syncthreads();
    }
    if (tid == 0)
        atomicMax(result, best[0]);
}
