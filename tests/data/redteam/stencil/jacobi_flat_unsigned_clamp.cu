// applier: RegisterColumnStencil or HaloTiledStencil
// 1-D grid over the flattened grid, unsigned index, / and %, neighbours clamped at the edges.
__global__ void smooth(const float *src, float *dst, unsigned int width, unsigned int height)
{
    unsigned int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < width * height) {
        unsigned int x = idx % width;
        unsigned int y = idx / width;
        unsigned int xl = x > 0 ? x - 1 : 0;
        unsigned int xr = x < width - 1 ? x + 1 : width - 1;
        unsigned int yu = y > 0 ? y - 1 : 0;
        unsigned int yd = y < height - 1 ? y + 1 : height - 1;
        dst[idx] = 0.25f * (src[y * width + xl] + src[y * width + xr] + src[yu * width + x] + src[yd * width + x]);
    }
}
