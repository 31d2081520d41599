// applier: RegisterColumnStencil or HaloTiledStencil
// Templated element type (instantiated float), T(0.25) coefficient, interior guard.
template <typename T>
__global__ void jacobi_t(const T *src, T *dst, int nx, int ny)
{
    const int ix = blockIdx.x * blockDim.x + threadIdx.x;
    const int iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix > 0 && ix < nx - 1 && iy > 0 && iy < ny - 1) {
        const int id = iy * nx + ix;
        dst[id] = T(0.25) * (src[id - 1] + src[id + 1] + src[id - nx] + src[id + nx]);
    }
}

template __global__ void jacobi_t<float>(const float *, float *, int, int);
