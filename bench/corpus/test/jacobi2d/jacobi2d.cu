// One Jacobi sweep of the 2-D Laplace equation (5-point average); boundary values are kept.
#include <cuda_runtime.h>

__global__ void jacobi_step(const float *u, float *u_new, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny)
        return;
    int k = j * nx + i;
    if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
        u_new[k] = u[k];
        return;
    }
    u_new[k] = 0.25f * (u[k - 1] + u[k + 1] + u[k - nx] + u[k + nx]);
}
