// C = alpha * A * B + beta * C, all row-major: one thread per element of C.
#include <cuda_runtime.h>

__global__ void gemm_scaled(int M, int N, int K, float alpha, const float *A, const float *B,
                            float beta, float *C)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0;
        for (int k = 0; k < K; k++)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
    }
}
