// Histogram of the top 12 bits of 32-bit keys (4096 bins), one global atomic per key.
#include <cuda_runtime.h>

__global__ void histogram_top12(const unsigned int *vals, unsigned int *bins, int n)
{
    // Count into a private copy in shared memory (cheap shared atomics), 2 points per thread
    // in flight; then add the non-zero counts to the global ones once per block.
    __shared__ unsigned int local_rg[4096];
    for (int b_rg = threadIdx.y * blockDim.x + threadIdx.x; b_rg < 4096; b_rg += blockDim.x * blockDim.y)
        (&local_rg[0])[b_rg] = 0;
    __syncthreads();
    unsigned int *mine_rg = local_rg;
    const long long upper_rg = (long long)(n);
    const long long stride_rg = (long long)blockDim.x * gridDim.x;
    for (long long t_rg = (long long)blockIdx.x * blockDim.x + threadIdx.x; t_rg < upper_rg; t_rg += 2LL * stride_rg) {
        bool has0_rg = false; long long key0_rg = 0; unsigned int amount0_rg = 0;
        bool has1_rg = false; long long key1_rg = 0; unsigned int amount1_rg = 0;
        {
            const long long p_rg = t_rg + 0LL * stride_rg;
            if (p_rg < upper_rg) {
                int i = (int)p_rg; 
                if (i < n) {
                    (has0_rg = true, key0_rg = (long long)((vals[i] >> 20)), amount0_rg = (unsigned int)(1u));
                }
            }
        }
        {
            const long long p_rg = t_rg + 1LL * stride_rg;
            if (p_rg < upper_rg) {
                int i = (int)p_rg; 
                if (i < n) {
                    (has1_rg = true, key1_rg = (long long)((vals[i] >> 20)), amount1_rg = (unsigned int)(1u));
                }
            }
        }
        if (has0_rg) atomicAdd(&mine_rg[key0_rg], amount0_rg);
        if (has1_rg) atomicAdd(&mine_rg[key1_rg], amount1_rg);
    }
    __syncthreads();
    for (int b_rg = threadIdx.y * blockDim.x + threadIdx.x; b_rg < 4096; b_rg += blockDim.x * blockDim.y) {
        const unsigned int total_rg = local_rg[b_rg];
        if (total_rg != 0)
            atomicAdd(&bins[b_rg], total_rg);
    }
}
