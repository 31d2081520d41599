// Integer batched products C[b] = A[b] * B[b] (exact), the operand pointers moved to the matrix and
// the k loop written as a while loop; x over columns, y over rows, the batch along grid z.
#include <cuda_runtime.h>

__global__ void ibmm_while(const int *A, const int *B, int *C, int M, int N, int K, int batch)
{
    const int z = blockIdx.z;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (z >= batch || r >= M || c >= N)
        return;
    A += (size_t)z * M * K;
    B += (size_t)z * K * N;
    C += (size_t)z * M * N;
    int acc = 0;
    int k = 0;
    while (k < K) {
        acc += A[r * K + k] * B[k * N + c];
        ++k;
    }
    C[r * N + c] = acc;
}
