// Histogram of keys modulo 1000 into 64-bit counters, a grid-stride loop over the keys.
__global__ void key_classes(const unsigned int *keys, unsigned long long *bins, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int bin = keys[i] % 1000u;
        atomicAdd(&bins[bin], 1ULL);
    }
}
