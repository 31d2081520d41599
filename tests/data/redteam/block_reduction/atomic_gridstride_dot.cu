// A dot product as real code often writes it: a grid-stride loop of products per thread, a
// sequential-addressing tree per block, one atomicAdd per block into the result.
// applier: BlockReduceAtomic
__global__ void dot(const float *a, const float *b, float *result, int n)
{
    __shared__ float cache[256];
    float temp = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        temp += a[i] * b[i];
    cache[threadIdx.x] = temp;
    __syncthreads();
    int half = blockDim.x / 2;
    while (half != 0) {
        if (threadIdx.x < half)
            cache[threadIdx.x] += cache[threadIdx.x + half];
        __syncthreads();
        half /= 2;
    }
    if (threadIdx.x == 0)
        atomicAdd(result, cache[0]);
}
