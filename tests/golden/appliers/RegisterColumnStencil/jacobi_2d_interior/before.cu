// applier: RegisterColumnStencil or HaloTiledStencil
// Course-assignment Jacobi: 2-D launch, x = column, interior only (the boundary is left alone).
__global__ void jacobi(const float *u, float *unew, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
        unew[y * nx + x] = 0.25f * (u[y * nx + x - 1] + u[y * nx + x + 1] +
                                    u[(y - 1) * nx + x] + u[(y + 1) * nx + x]);
    }
}
