// applier: ParallelScan
// Running minimum: out[i] = min(x[0..i]), each thread looping over its own prefix (O(n^2) loads).
#include <cuda_runtime.h>

__global__ void running_min(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float m = x[0];
        for (int j = 1; j <= i; ++j)
            m = fminf(m, x[j]);
        out[i] = m;
    }
}
