// 3-D permutation reversing the axes (z, y, x) -> (x, y, z), 1-D launch over the flat index, unsigned.
// applier: TiledPermutation
__global__ void reverse_axes(const float *in, float *out, unsigned nx, unsigned ny, unsigned nz)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nx * ny * nz) return;
    unsigned x = t % nx;
    unsigned y = (t / nx) % ny;
    unsigned z = t / (nx * ny);
    out[(x * ny + y) * nz + z] = in[t];
}
