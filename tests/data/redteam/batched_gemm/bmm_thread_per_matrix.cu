// applier: BatchedSmallMatmul
// One thread multiplies a whole small matrix pair (ported CPU triple loop), 4x4 fixed by #define.
#define DIM 4

__global__ void mat4_batch(const float *A, const float *B, float *C, int count)
{
    int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m < count) {
        for (int i = 0; i < DIM; i++) {
            for (int j = 0; j < DIM; j++) {
                float s = 0.0f;
                for (int k = 0; k < DIM; k++)
                    s += A[m * DIM * DIM + i * DIM + k] * B[m * DIM * DIM + k * DIM + j];
                C[m * DIM * DIM + i * DIM + j] = s;
            }
        }
    }
}
