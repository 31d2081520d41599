// Embedding lookup: out[t][d] = table[ids[t]][d], x over the embedding dimension, y over tokens.
// applier: VectorizedMap
__global__ void embed(const long long *ids, const float *table, float *out, int ntok, int dim)
{
    int d = blockIdx.x * blockDim.x + threadIdx.x;
    int t = blockIdx.y;
    if (d < dim && t < ntok)
        out[(size_t)t * dim + d] = table[ids[t] * dim + d];
}
