// applier: RegisterColumnStencil or HaloTiledStencil
// Fortran-style index order i + nx * (j + ny * k), explicit neighbour indices, 3-D launch.
__global__ void heat_f(const double *u, double *un, int nx, int ny, int nz, double lam)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int j = threadIdx.y + blockIdx.y * blockDim.y;
    int k = threadIdx.z + blockIdx.z * blockDim.z;
    if (i < 1 || i >= nx - 1 || j < 1 || j >= ny - 1 || k < 1 || k >= nz - 1) return;
    int c = i + nx * (j + ny * k);
    int w = (i - 1) + nx * (j + ny * k), e = (i + 1) + nx * (j + ny * k);
    int s = i + nx * ((j - 1) + ny * k), n = i + nx * ((j + 1) + ny * k);
    int b = i + nx * (j + ny * (k - 1)), t = i + nx * (j + ny * (k + 1));
    un[c] = u[c] + lam * (u[w] + u[e] + u[s] + u[n] + u[b] + u[t] - 6.0 * u[c]);
}
