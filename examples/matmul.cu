// Naive single-precision matrix multiply: C = A * B, all N x N, row-major.
#include <cuda_runtime.h>

__global__ void matmul(const float *A, const float *B, float *C, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < N && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < N; k++) {
            sum += A[row * N + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}

void run_matmul(const float *dA, const float *dB, float *dC, int N)
{
    dim3 block(16, 16);
    dim3 grid((N + 15) / 16, (N + 15) / 16);
    matmul<<<grid, block>>>(dA, dB, dC, N);
}
