// C[b] = alpha * A[b] * B[b] + beta * C[b] for a batch of small float matrices, the dot product in
// a __device__ helper; a 2-D grid of 2-D blocks per matrix with the batch along grid z.
#include <cuda_runtime.h>

__device__ float row_times_col(const float *row, const float *col, int len, int stride)
{
    float s = 0.0f;
    for (int k = 0; k < len; ++k)
        s += row[k] * col[k * stride];
    return s;
}

__global__ void sbmm_helper(const float *A, const float *B, float *C, int batch, int M, int N, int K,
                            float alpha, float beta)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (b < batch && row < M && col < N) {
        float d = row_times_col(A + ((size_t)b * M + row) * K, B + (size_t)b * K * N + col, K, N);
        size_t o = ((size_t)b * M + row) * N + col;
        C[o] = alpha * d + beta * C[o];
    }
}
