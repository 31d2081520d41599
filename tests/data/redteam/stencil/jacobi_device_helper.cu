// applier: RegisterColumnStencil or HaloTiledStencil
// Reads go through a __device__ accessor returning 0 outside the grid (zero padding).
__device__ float at(const float *g, int x, int y, int nx, int ny)
{
    return (x < 0 || y < 0 || x >= nx || y >= ny) ? 0.0f : g[y * nx + x];
}

__global__ void relax(const float *g, float *out, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < nx && y < ny)
        out[y * nx + x] = 0.25f * (at(g, x - 1, y, nx, ny) + at(g, x + 1, y, nx, ny) +
                                   at(g, x, y - 1, nx, ny) + at(g, x, y + 1, nx, ny));
}
