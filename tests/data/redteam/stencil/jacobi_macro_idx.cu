// applier: RegisterColumnStencil or HaloTiledStencil
// Indexing macro, early return for the boundary.
#define IDX(r, c) ((r) * (w) + (c))

__global__ void jacobi_step(const double *a, double *b, int w, int h)
{
    int c = threadIdx.x + blockIdx.x * blockDim.x;
    int r = threadIdx.y + blockIdx.y * blockDim.y;
    if (c < 1 || r < 1 || c >= w - 1 || r >= h - 1)
        return;
    b[IDX(r, c)] = 0.25 * (a[IDX(r - 1, c)] + a[IDX(r + 1, c)] + a[IDX(r, c - 1)] + a[IDX(r, c + 1)]);
}
