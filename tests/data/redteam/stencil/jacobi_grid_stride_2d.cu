// applier: RegisterColumnStencil or HaloTiledStencil
// Grid-stride loops in both dimensions (launch smaller than the grid), interior only.
__global__ void jacobi_gs(const float *u, float *un, int nx, int ny)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y + 1; y < ny - 1; y += blockDim.y * gridDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x + 1; x < nx - 1; x += blockDim.x * gridDim.x) {
            un[y * nx + x] = 0.25f * (u[y * nx + (x - 1)] + u[y * nx + (x + 1)] + u[(y - 1) * nx + x] + u[(y + 1) * nx + x]);
        }
    }
}
