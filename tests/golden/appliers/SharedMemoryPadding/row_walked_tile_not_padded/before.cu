// A 32 x 32 tile staged in shared memory and read back by rows: each warp reads one row
// (consecutive words, no bank conflict), so padding it buys nothing.
#include <cuda_runtime.h>

__global__ void stage_rows(const float *in, float *out, int n)
{
    __shared__ float tile[32][32];
    int base = blockIdx.x * 1024;
    int r = threadIdx.y, c = threadIdx.x;
    if (base + r * 32 + c < n)
        tile[r][c] = in[base + r * 32 + c];
    __syncthreads();
    if (base + r * 32 + c < n)
        out[base + r * 32 + c] = 2.0f * tile[r][c];
}
