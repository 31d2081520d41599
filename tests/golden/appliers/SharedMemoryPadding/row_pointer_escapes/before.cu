// A 32 x 32 shared tile whose rows are handed out as plain pointers (`tile[r]`): the tile
// escapes its 2-D subscripts, so its layout must stay as declared.
#include <cuda_runtime.h>

__device__ float row_max(const float *row)
{
    float m = row[0];
    for (int c = 1; c < 32; ++c)
        m = fmaxf(m, row[c]);
    return m;
}

__global__ void tile_row_max(const float *in, float *out, int n)
{
    __shared__ float tile[32][32];
    int base = blockIdx.x * 1024;
    int r = threadIdx.y, c = threadIdx.x;
    tile[r][c] = base + r * 32 + c < n ? in[base + r * 32 + c] : -1e30f;
    __syncthreads();
    if (c == 0 && blockIdx.x * 32 + r < (n + 31) / 32)
        out[blockIdx.x * 32 + r] = row_max(tile[r]);
}
