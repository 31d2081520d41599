// applier: RegisterColumnStencil or HaloTiledStencil
// size_t strides precomputed, z from blockIdx.z only (one plane per grid layer), double.
__global__ void diffuse(const double *__restrict__ src, double *__restrict__ dst, int nx, int ny, int nz, double dt)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t j = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t k = blockIdx.z;
    const size_t sj = nx;
    const size_t sk = (size_t)nx * ny;
    if (i < 1 || j < 1 || k < 1 || i + 1 >= (size_t)nx || j + 1 >= (size_t)ny || k + 1 >= (size_t)nz) return;
    const size_t o = k * sk + j * sj + i;
    dst[o] = src[o] + dt * (src[o + 1] + src[o - 1] + src[o + sj] + src[o - sj] + src[o + sk] + src[o - sk] - 6.0 * src[o]);
}
