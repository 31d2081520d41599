// Embedding lookup: out row t = weight row tokens[t]; x over the embedding, y over the tokens.
#include <cuda_runtime.h>

__global__ void embedding_lookup(const float *weight, const long long *tokens, float *out,
                                 int num_tokens, int dim, int vocab)
{
    int d = threadIdx.x + blockIdx.x * blockDim.x;
    int t = threadIdx.y + blockIdx.y * blockDim.y;
    if (t < num_tokens && d < dim)
        out[(size_t)t * dim + d] = weight[tokens[t] * dim + d];
}
