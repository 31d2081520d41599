// applier: RegisterColumnStencil or HaloTiledStencil
// Poisson Jacobi with a right-hand side, size_t indices, __restrict__ pointers, double.
__global__ void poisson_jacobi(const double *__restrict__ u, const double *__restrict__ f,
                               double *__restrict__ v, size_t nx, size_t ny, double h2)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t j = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1) {
        size_t k = j * nx + i;
        v[k] = 0.25 * (u[k - 1] + u[k + 1] + u[k - nx] + u[k + nx] - h2 * f[k]);
    }
}
