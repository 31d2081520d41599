// Per-block partial sums where each thread first adds two elements a block apart (the "first
// add during load" step), then halves the active threads; the block size is a template
// parameter and the buffer is `extern __shared__`.
template <unsigned int blockSize>
__global__ void reduce_two(const float *g_idata, float *g_odata, unsigned int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    int mySum = (i < n) ? g_idata[i] : 0.0f;
    if (i + blockSize < n)
        mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        g_odata[blockIdx.x] = mySum;
}

template __global__ void reduce_two<256>(const float *, float *, unsigned int);
