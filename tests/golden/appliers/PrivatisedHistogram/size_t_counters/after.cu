// Histogram of the high nibble of bytes into size_t counters (16 bins): size_t has no atomicAdd of
// its own, so the counter is added through unsigned long long.
#include <cstddef>

__global__ void nibble_histogram(const unsigned char *data, size_t *counts, size_t n)
{
    // Count into a private copy in shared memory (cheap shared atomics), 4 points per thread
    // in flight; then add the non-zero counts to the global ones once per block.
    __shared__ size_t local_rg[8][16];
    for (int b_rg = threadIdx.y * blockDim.x + threadIdx.x; b_rg < 128; b_rg += blockDim.x * blockDim.y)
        (&local_rg[0][0])[b_rg] = 0;
    __syncthreads();
    size_t *mine_rg = local_rg[(threadIdx.x >> 5) % 8];  // this warp's copy
    const long long upper_rg = (long long)(n);
    const long long stride_rg = (long long)blockDim.x * gridDim.x;
    for (long long t_rg = (long long)blockIdx.x * blockDim.x + threadIdx.x; t_rg < upper_rg; t_rg += 4LL * stride_rg) {
        bool has0_rg = false; long long key0_rg = 0; size_t amount0_rg = 0;
        bool has1_rg = false; long long key1_rg = 0; size_t amount1_rg = 0;
        bool has2_rg = false; long long key2_rg = 0; size_t amount2_rg = 0;
        bool has3_rg = false; long long key3_rg = 0; size_t amount3_rg = 0;
        {
            const long long p_rg = t_rg + 0LL * stride_rg;
            if (p_rg < upper_rg) {
                size_t i = (size_t)p_rg; 
                if (i < n) {
                    (has0_rg = true, key0_rg = (long long)(data[i] >> 4), amount0_rg = (size_t)(1ULL));
                }
            }
        }
        {
            const long long p_rg = t_rg + 1LL * stride_rg;
            if (p_rg < upper_rg) {
                size_t i = (size_t)p_rg; 
                if (i < n) {
                    (has1_rg = true, key1_rg = (long long)(data[i] >> 4), amount1_rg = (size_t)(1ULL));
                }
            }
        }
        {
            const long long p_rg = t_rg + 2LL * stride_rg;
            if (p_rg < upper_rg) {
                size_t i = (size_t)p_rg; 
                if (i < n) {
                    (has2_rg = true, key2_rg = (long long)(data[i] >> 4), amount2_rg = (size_t)(1ULL));
                }
            }
        }
        {
            const long long p_rg = t_rg + 3LL * stride_rg;
            if (p_rg < upper_rg) {
                size_t i = (size_t)p_rg; 
                if (i < n) {
                    (has3_rg = true, key3_rg = (long long)(data[i] >> 4), amount3_rg = (size_t)(1ULL));
                }
            }
        }
        if (has0_rg) atomicAdd((unsigned long long *)(&mine_rg[key0_rg]), (unsigned long long)(amount0_rg));
        if (has1_rg) atomicAdd((unsigned long long *)(&mine_rg[key1_rg]), (unsigned long long)(amount1_rg));
        if (has2_rg) atomicAdd((unsigned long long *)(&mine_rg[key2_rg]), (unsigned long long)(amount2_rg));
        if (has3_rg) atomicAdd((unsigned long long *)(&mine_rg[key3_rg]), (unsigned long long)(amount3_rg));
    }
    __syncthreads();
    for (int b_rg = threadIdx.y * blockDim.x + threadIdx.x; b_rg < 16; b_rg += blockDim.x * blockDim.y) {
        const size_t total_rg = local_rg[0][b_rg] + local_rg[1][b_rg] + local_rg[2][b_rg] + local_rg[3][b_rg] + local_rg[4][b_rg] + local_rg[5][b_rg] + local_rg[6][b_rg] + local_rg[7][b_rg];
        if (total_rg != 0)
            atomicAdd((unsigned long long *)(&counts[b_rg]), (unsigned long long)(total_rg));
    }
}
