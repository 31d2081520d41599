// 256-bin byte histogram: one global atomic per input byte.
#include <cuda_runtime.h>

__global__ void byte_histogram(const unsigned char *bytes, unsigned int *counts, int n)
{
    // One private 256-bin histogram per warp in shared memory: a warp's atomics contend only
    // with its own lanes. Summed over the warps and added to the global bins once per block.
    __shared__ unsigned int warp_bins_rg[8][256];
    for (int b_rg = threadIdx.x; b_rg < 8 * 256; b_rg += blockDim.x)
        warp_bins_rg[b_rg / 256][b_rg % 256] = 0;
    __syncthreads();
    unsigned int *mine_rg = warp_bins_rg[(threadIdx.x >> 5) % 8];
    const long long first_rg = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride_rg = (long long)blockDim.x * gridDim.x;
    const long long total_rg = (long long)(n);
    // 16 bytes per load when the data is 16-byte aligned (cudaMalloc's is); else all scalar.
    const long long vectors_rg = (reinterpret_cast<unsigned long long>(bytes) & 15) == 0 && total_rg > 0 ? total_rg / 16 : 0;
    const uint4 *data4_rg = reinterpret_cast<const uint4 *>(bytes);
    for (long long v_rg = first_rg; v_rg < vectors_rg; v_rg += stride_rg) {
        const uint4 q_rg = data4_rg[v_rg];
        const unsigned int words_rg[4] = {q_rg.x, q_rg.y, q_rg.z, q_rg.w};
#pragma unroll
        for (int w_rg = 0; w_rg < 4; w_rg++) {
            const unsigned int word_rg = words_rg[w_rg];
            atomicAdd(&mine_rg[(word_rg >> 0) & 255u], (unsigned int)1);
            atomicAdd(&mine_rg[(word_rg >> 8) & 255u], (unsigned int)1);
            atomicAdd(&mine_rg[(word_rg >> 16) & 255u], (unsigned int)1);
            atomicAdd(&mine_rg[(word_rg >> 24) & 255u], (unsigned int)1);
        }
    }
    for (long long i_rg = vectors_rg * 16 + first_rg; i_rg < total_rg; i_rg += stride_rg)
        atomicAdd(&mine_rg[bytes[i_rg]], (unsigned int)1);
    __syncthreads();
    for (int b_rg = threadIdx.x; b_rg < 256; b_rg += blockDim.x) {
        unsigned int sum_rg = 0;
#pragma unroll
        for (int w_rg = 0; w_rg < 8; w_rg++)
            sum_rg += warp_bins_rg[w_rg][b_rg];
        if (sum_rg != 0)
            atomicAdd(&counts[b_rg], sum_rg);
    }
}

void launch_byte_histogram(const unsigned char *bytes, unsigned int *counts, int n)
{
    byte_histogram<<<(n + 255) / 256, 256>>>(bytes, counts, n);
}
