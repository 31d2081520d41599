// applier: RegisterColumnStencil or HaloTiledStencil
// Zero padding by ternaries on each neighbour, one thread per point.
__global__ void jacobi_pad(const float *u, float *w, int n, int m)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < m && col < n) {
        int p = row * n + col;
        float left = col > 0 ? u[p - 1] : 0.0f;
        float right = col < n - 1 ? u[p + 1] : 0.0f;
        float up = row > 0 ? u[p - n] : 0.0f;
        float down = row < m - 1 ? u[p + n] : 0.0f;
        w[p] = 0.25f * (left + right + up + down);
    }
}
