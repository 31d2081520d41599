// The shared-memory matmul for any sizes: ceil(K / TILE) tiles, each load guarded by the
// matrix's bounds (zeros outside), the store guarded; the tile a macro.
// applier: MatmulTiling
#define TILE_W 16

__global__ void matmul_any(const float *a, const float *b, float *c, int m, int n, int k)
{
    __shared__ float sa[TILE_W][TILE_W];
    __shared__ float sb[TILE_W][TILE_W];
    int row = blockIdx.y * TILE_W + threadIdx.y;
    int col = blockIdx.x * TILE_W + threadIdx.x;
    float value = 0.0f;
    for (int ph = 0; ph < (k + TILE_W - 1) / TILE_W; ++ph) {
        sa[threadIdx.y][threadIdx.x] = (row < m && ph * TILE_W + threadIdx.x < k) ? a[row * k + ph * TILE_W + threadIdx.x] : 0.0f;
        sb[threadIdx.y][threadIdx.x] = (ph * TILE_W + threadIdx.y < k && col < n) ? b[(ph * TILE_W + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE_W; ++i)
            value += sa[threadIdx.y][i] * sb[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n)
        c[row * n + col] = value;
}
