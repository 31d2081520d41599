// out[i] = src[idx[i]]: a 1-D gather through an index array.
// applier: VectorizedMap
__global__ void gather1d(const float *src, const int *idx, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = src[idx[i]];
}
