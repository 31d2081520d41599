__global__ void histogram(const unsigned char *__restrict__ data, unsigned int *__restrict__ bins, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[data[i]], 1u);
    }
}
