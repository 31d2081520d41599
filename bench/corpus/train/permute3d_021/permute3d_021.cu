// Swaps the two inner axes of a d0 x d1 x d2 tensor (permutation 0,2,1); blockIdx.z walks d0.
#include <cuda_runtime.h>

__global__ void permute_021(const float *in, float *out, int d0, int d1, int d2)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int i = blockIdx.z;
    if (k < d2 && j < d1 && i < d0)
        out[((size_t)i * d2 + k) * d1 + j] = in[((size_t)i * d1 + j) * d2 + k];
}
