// A 32 x 32 shared tile cleared with memset over sizeof(tile): padding would change what
// sizeof measures, so the tile is left as declared.
#include <cuda_runtime.h>

__global__ void count_pairs(const int *a, const int *b, int *counts, int n)
{
    __shared__ int tile[32][32];
    if (threadIdx.x == 0 && threadIdx.y == 0)
        memset(tile, 0, sizeof(tile));
    __syncthreads();
    int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&tile[a[i] & 31][b[i] & 31], 1);
    __syncthreads();
    atomicAdd(&counts[threadIdx.y * 32 + threadIdx.x], tile[threadIdx.y][threadIdx.x]);
}
