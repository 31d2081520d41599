// 9-point 1-D stencil (radius 4) with weights from memory; zero outside the array.
#include <cuda_runtime.h>

#define RADIUS 4

__global__ void stencil_1d(const float *in, const float *w, float *out, int n)
{
    // 256 points per block; the tile of in with its halo is loaded once, coalesced, only where the kernel reads.
    __shared__ float tile_rg[264];
    const int i0_rg = blockIdx.x * 256;
    for (int l0_rg = threadIdx.x; l0_rg < 264; l0_rg += 256) {
        const int g0_rg = i0_rg - 4 + l0_rg;
        if ((g0_rg >= (0) + (-4) && g0_rg < (n) + (4) && g0_rg >= 0 && g0_rg < n))
            tile_rg[l0_rg] = in[g0_rg];
    }
    __syncthreads();
    for (int l0_rg = threadIdx.x; l0_rg < 256; l0_rg += 256) {
        int i = i0_rg + l0_rg;
        if (!(i >= n)) {
            float s = 0.0f;
            for (int o = -RADIUS; o <= RADIUS; ++o) {
                int j = i + o;
                if (j >= 0 && j < n)
                    s += w[o + RADIUS] * tile_rg[l0_rg + 4 + (o)];
            }
            out[i] = s;
        }
    }
}
