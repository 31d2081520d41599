// One Jacobi sweep of the 2-D Laplace equation on a double grid: an interior point takes the mean
// of its four neighbours, a boundary point is copied; one thread per point on a flat 1-D launch.
#include <cuda_runtime.h>

__global__ void jacobi_sweep_f64(const double *u, double *u_new, int nx, int ny)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= nx * ny)
        return;
    int i = p % nx;
    int j = p / nx;
    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1)
        u_new[p] = 0.25 * (u[p - 1] + u[p + 1] + u[p - nx] + u[p + nx]);
    else
        u_new[p] = u[p];
}
