// applier: RegisterColumnStencil or HaloTiledStencil
// Block size fixed by #define and used in the index; interior guard written with <=.
#define BLOCK 16

__global__ void jacobi_blk(const float *u, float *v, int N)
{
    int x = blockIdx.x * BLOCK + threadIdx.x;
    int y = blockIdx.y * BLOCK + threadIdx.y;
    if (x >= 1 && x <= N - 2 && y >= 1 && y <= N - 2)
        v[x + y * N] = 0.25f * (u[(x - 1) + y * N] + u[(x + 1) + y * N] + u[x + (y - 1) * N] + u[x + (y + 1) * N]);
}
