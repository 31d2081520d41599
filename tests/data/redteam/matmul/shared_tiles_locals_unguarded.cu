// A shared-memory matmul the way the vendor samples lay it out: thread and block indices in
// locals, the tile size a macro, the shared tiles declared inside the loop over K tiles, no
// guard (every size a multiple of the tile).
// applier: MatmulTiling
#define BLOCK_SIZE 32

__global__ void MatMulShared(float *C, const float *A, const float *B, int hA, int wA, int wB)
{
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int r = by * BLOCK_SIZE + ty;
    int c = bx * BLOCK_SIZE + tx;
    float Csub = 0;
    for (int m = 0; m < wA / BLOCK_SIZE; m++) {
        __shared__ float sA[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float sB[BLOCK_SIZE][BLOCK_SIZE];
        sA[ty][tx] = A[r * wA + (m * BLOCK_SIZE + tx)];
        sB[ty][tx] = B[(m * BLOCK_SIZE + ty) * wB + c];
        __syncthreads();
        for (int e = 0; e < BLOCK_SIZE; ++e)
            Csub += sA[ty][e] * sB[e][tx];
        __syncthreads();
    }
    C[r * wB + c] = Csub;
}
