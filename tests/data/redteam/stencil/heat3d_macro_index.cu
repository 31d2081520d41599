// applier: RegisterColumnStencil or HaloTiledStencil
// Index macro over three coordinates; dims as separate ints; early return guard.
#define I3(i, j, k) (((k) * ny + (j)) * nx + (i))

__global__ void heat7(const float *a, float *b, int nx, int ny, int nz, float k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int l = blockIdx.z * blockDim.z + threadIdx.z;
    if (i <= 0 || j <= 0 || l <= 0 || i >= nx - 1 || j >= ny - 1 || l >= nz - 1) return;
    b[I3(i, j, l)] = a[I3(i, j, l)] + k * (a[I3(i - 1, j, l)] + a[I3(i + 1, j, l)] + a[I3(i, j - 1, l)] +
                                           a[I3(i, j + 1, l)] + a[I3(i, j, l - 1)] + a[I3(i, j, l + 1)] -
                                           6.0f * a[I3(i, j, l)]);
}
