// Row gather dst row t = weights row ids[t]: one thread copies one whole row through two
// row pointers.
#include <cuda_runtime.h>

__global__ void copy_token_rows(const float *weights, const int *ids, float *dst, int n_tokens, int dim, int vocab)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_tokens)
        return;
    const float *from = weights + (size_t)ids[t] * dim;
    float *to = dst + (size_t)t * dim;
    for (int k = 0; k < dim; k++)
        to[k] = from[k];
}
