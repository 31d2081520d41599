// applier: RegisterColumnStencil or HaloTiledStencil
// 7-point heat step on a 3-D launch, interior only, float.
__global__ void heat3d(const float *T, float *Tn, int nx, int ny, int nz, float alpha)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
        int c = (k * ny + j) * nx + i;
        Tn[c] = T[c] + alpha * (T[c - 1] + T[c + 1] + T[c - nx] + T[c + nx] + T[c - nx * ny] + T[c + nx * ny] - 6.0f * T[c]);
    }
}
