// 3-point 1-D stencil (radius 1) with the weights written out, interior points only.
#include <cuda_runtime.h>

__global__ void blur3(const float *in, float *out, int n)
{
    // 256 points per block; the tile of in with its halo is loaded once, coalesced, only where the kernel reads.
    __shared__ float tile_rg[258];
    const int i0_rg = blockIdx.x * 256;
    for (int l0_rg = threadIdx.x; l0_rg < 258; l0_rg += 256) {
        const int g0_rg = i0_rg - 1 + l0_rg;
        if ((g0_rg >= (1) + (-1) && g0_rg < (n - 1) + (-1)) || (g0_rg >= (1) + (0) && g0_rg < (n - 1) + (0)) || (g0_rg >= (1) + (1) && g0_rg < (n - 1) + (1)))
            tile_rg[l0_rg] = in[g0_rg];
    }
    __syncthreads();
    for (int l0_rg = threadIdx.x; l0_rg < 256; l0_rg += 256) {
        int i = i0_rg + l0_rg;
        if (i >= 1 && i < n - 1) {
            out[i] = 0.25f * tile_rg[l0_rg + 1 + (-1)] + 0.5f * tile_rg[l0_rg + 1] + 0.25f * tile_rg[l0_rg + 1 + (1)];
        }
    }
}
