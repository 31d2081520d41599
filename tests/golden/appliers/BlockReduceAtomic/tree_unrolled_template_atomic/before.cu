// A whole-array sum, the samples' reduce4 steps with a running sum (`sdata[tid] = mySum =
// mySum + ...`, the step's guard and the block size in one condition) over a template block
// size, every step behind a barrier, and one atomicAdd per block.
// applier: BlockReduceAtomic
template <class T, unsigned int blockSize>
__global__ void reduce_total(const T *g_idata, T *g_total, unsigned int n)
{
    extern __shared__ T sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    T mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n)
        mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    __syncthreads();
    if ((blockSize >= 512) && (tid < 256))
        sdata[tid] = mySum = mySum + sdata[tid + 256];
    __syncthreads();
    if ((blockSize >= 256) && (tid < 128))
        sdata[tid] = mySum = mySum + sdata[tid + 128];
    __syncthreads();
    if ((blockSize >= 128) && (tid < 64))
        sdata[tid] = mySum = mySum + sdata[tid + 64];
    __syncthreads();
    for (unsigned int offset = 32; offset > 0; offset /= 2) {
        if (tid < offset)
            sdata[tid] = mySum = mySum + sdata[tid + offset];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(g_total, mySum);
}

template __global__ void reduce_total<float, 256>(const float *, float *, unsigned int);
