// out[i] = in[perm[i]] with int data, a grid-stride loop and size_t indices.
// applier: VectorizedMap
__global__ void permute_gather(const int *in, const unsigned *perm, int *out, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[perm[i]];
}
