// Batched C[b] = At[b]^T * B[b] + beta * C[b], the left operand stored transposed (K x M per
// matrix), on a 2-D grid of 2-D blocks per matrix with the batch along grid z.
#include <cuda_runtime.h>

__global__ void bmm_tn_beta(const float *At, const float *B, float *C, float beta, int batch, int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (row < M && col < N && z < batch) {
        size_t at_off = (size_t)z * K * M, b_off = (size_t)z * K * N;
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += At[at_off + k * M + row] * B[b_off + k * N + col];
        size_t o = (size_t)z * M * N + row * N + col;
        C[o] = acc + beta * C[o];
    }
}
