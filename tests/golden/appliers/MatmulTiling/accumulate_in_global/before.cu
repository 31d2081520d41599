// C += A * B accumulated straight into global memory at every step of k: the output is
// read and written inside the product loop, which a tiled rewrite may not reorder.
#include <cuda_runtime.h>

__global__ void matmul_accumulate(const float *A, const float *B, float *C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        for (int k = 0; k < K; ++k)
            C[row * N + col] += A[row * K + k] * B[k * N + col];
    }
}
