// Explicit heat-equation step on a 3-D float grid with insulated faces (a missing neighbour
// counts as the point itself): T' = T + r * (sum of the 6 neighbours - 6 T); 3-D launch.
#include <cuda_runtime.h>

__global__ void heat3d_step(const float *T, float *T_next, int nx, int ny, int nz, float r)
{
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    int z = threadIdx.z + blockIdx.z * blockDim.z;
    if (x >= nx || y >= ny || z >= nz)
        return;
    int id = (z * ny + y) * nx + x;
    float c = T[id];
    float west = x > 0 ? T[id - 1] : c;
    float east = x < nx - 1 ? T[id + 1] : c;
    float south = y > 0 ? T[id - nx] : c;
    float north = y < ny - 1 ? T[id + nx] : c;
    float below = z > 0 ? T[id - nx * ny] : c;
    float above = z < nz - 1 ? T[id + nx * ny] : c;
    T_next[id] = c + r * (west + east + south + north + below + above - 6.0f * c);
}
