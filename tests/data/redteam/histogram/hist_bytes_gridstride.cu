// Byte histogram, grid-stride loop, 256 bins of unsigned int.
// applier: PrivatisedHistogram
__global__ void byte_hist(const unsigned char *buf, unsigned int *bins, size_t len)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < len; i += (size_t)gridDim.x * blockDim.x)
        atomicAdd(&bins[buf[i]], 1u);
}
