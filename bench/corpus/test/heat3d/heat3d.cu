// Explicit heat-equation step on a 3-D grid (7-point Laplacian); the z index comes from blockIdx.z.
#include <cuda_runtime.h>

__global__ void heat_step_3d(const float *t, float *t_next, int nx, int ny, int nz, float alpha)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x >= nx || y >= ny || z >= nz)
        return;
    size_t plane = (size_t)nx * ny;
    size_t c = z * plane + (size_t)y * nx + x;
    if (x == 0 || x == nx - 1 || y == 0 || y == ny - 1 || z == 0 || z == nz - 1) {
        t_next[c] = t[c];
        return;
    }
    float lap = t[c - 1] + t[c + 1] + t[c - nx] + t[c + nx] + t[c - plane] + t[c + plane] - 6.0f * t[c];
    t_next[c] = t[c] + alpha * lap;
}
