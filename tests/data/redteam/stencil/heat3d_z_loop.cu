// applier: RegisterColumnStencil or HaloTiledStencil
// 2-D launch over (x, y), each thread marches along z (the "2.5-D" naive form).
__global__ void heat_march(const float *in, float *out, int nx, int ny, int nz, float c0, float c1)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > nx - 2 || y > ny - 2) return;
    int plane = nx * ny;
    for (int z = 1; z < nz - 1; z++) {
        int p = z * plane + y * nx + x;
        out[p] = c0 * in[p] + c1 * (in[p - 1] + in[p + 1] + in[p - nx] + in[p + nx] + in[p - plane] + in[p + plane]);
    }
}
