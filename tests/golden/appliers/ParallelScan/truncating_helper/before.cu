// A serial running sum through an int helper: every partial sum is truncated to int, so this
// is not a float prefix sum and no parallel scan may replace it.
#include <cuda_runtime.h>

__device__ int add(int a, int b) { return a + b; }

__global__ void truncating_scan(const float *x, float *y, int n)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        float acc = 0.0f;
        for (int i = 0; i < n; ++i) {
            acc = add(acc, x[i]);
            y[i] = acc;
        }
    }
}
