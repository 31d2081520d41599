// Inclusive prefix sum of floats by one 1024-thread block: each thread totals a contiguous chunk,
// the chunk totals meet in shared memory, then each thread rescans its chunk from the totals of
// the chunks before it. 64-bit positions, ternaries for the chunk ends.
#include <cuda_runtime.h>

#define NT 1024

__global__ void chunked_cumsum(const float *src, float *dst, long long len)
{
    __shared__ float chunk_sum[NT];
    const long long me = threadIdx.x;
    const long long span = (len + NT - 1) / NT;
    const long long from = me * span < len ? me * span : len;
    const long long to = from + span < len ? from + span : len;
    float part = 0.0f;
    for (long long p = from; p < to; ++p)
        part += src[p];
    chunk_sum[me] = part;
    __syncthreads();
    float before = 0.0f;
    for (long long q = 0; q < me; ++q)
        before += chunk_sum[q];
    for (long long p = from; p < to; ++p) {
        before += src[p];
        dst[p] = before;
    }
}
