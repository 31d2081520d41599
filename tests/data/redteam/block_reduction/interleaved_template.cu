// Per-block partial sums, the textbook first step: interleaved addressing (`tid % (2 * s)`),
// a template over the element type and the block size, a static shared buffer of BLOCK.
// applier: BlockReduceAtomic
template <typename T, unsigned int BLOCK>
__global__ void reduce_interleaved(const T *g_in, T *g_partial, unsigned int n)
{
    __shared__ T sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_in[i] : T(0);
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        g_partial[blockIdx.x] = sdata[0];
}

// instantiated here: host code would do it with its launch
template __global__ void reduce_interleaved<float, 256>(const float *, float *, unsigned int);
