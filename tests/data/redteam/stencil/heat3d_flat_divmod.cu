// applier: RegisterColumnStencil or HaloTiledStencil
// 1-D grid over the flattened volume, / and % to recover (x, y, z); boundary cells copied; double.
__global__ void heat_step(const double *u, double *v, int NX, int NY, int NZ, double r)
{
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= NX * NY * NZ) return;
    int x = id % NX;
    int y = (id / NX) % NY;
    int z = id / (NX * NY);
    if (x == 0 || y == 0 || z == 0 || x == NX - 1 || y == NY - 1 || z == NZ - 1) {
        v[id] = u[id];
        return;
    }
    int sy = NX, sz = NX * NY;
    v[id] = (1.0 - 6.0 * r) * u[id] + r * (u[id - 1] + u[id + 1] + u[id - sy] + u[id + sy] + u[id - sz] + u[id + sz]);
}
