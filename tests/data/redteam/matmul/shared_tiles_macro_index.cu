// A shared-tile matmul through index macros (row-major A, B and C with
// leading dimensions), unsigned thread locals, `sum = sum + ...` in the tile loop.
// applier: MatmulTiling
#define TS 16
#define AT(p, r, c, ld) ((p)[(r) * (ld) + (c)])

__global__ void sgemm_tiled(const float *__restrict A, const float *__restrict B, float *__restrict C,
                            int M, int N, int K)
{
    __shared__ float tileA[TS][TS];
    __shared__ float tileB[TS][TS];
    const unsigned int tx = threadIdx.x;
    const unsigned int ty = threadIdx.y;
    const int row = blockIdx.y * TS + ty;
    const int col = blockIdx.x * TS + tx;
    float sum = 0.0f;
    for (int p = 0; p < K / TS; p++) {
        tileA[ty][tx] = AT(A, row, p * TS + tx, K);
        tileB[ty][tx] = AT(B, p * TS + ty, col, N);
        __syncthreads();
        for (int q = 0; q < TS; q++)
            sum = sum + tileA[ty][q] * tileB[q][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        AT(C, row, col, N) = sum;
}
