// applier: RegisterColumnStencil or HaloTiledStencil
// Insulated (Neumann) boundary by clamping neighbour coordinates with min/max; every cell written.
__global__ void heat_neumann(const float *t, float *tn, int nx, int ny, int nz, float alpha)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    int xm = max(x - 1, 0), xp = min(x + 1, nx - 1);
    int ym = max(y - 1, 0), yp = min(y + 1, ny - 1);
    int zm = max(z - 1, 0), zp = min(z + 1, nz - 1);
    int sxy = nx * ny;
    float c = t[z * sxy + y * nx + x];
    float lap = t[z * sxy + y * nx + xm] + t[z * sxy + y * nx + xp] + t[z * sxy + ym * nx + x] +
                t[z * sxy + yp * nx + x] + t[zm * sxy + y * nx + x] + t[zp * sxy + y * nx + x] - 6.0f * c;
    tn[z * sxy + y * nx + x] = c + alpha * lap;
}
