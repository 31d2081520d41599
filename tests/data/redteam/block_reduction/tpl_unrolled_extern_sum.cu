// Per-block partial sums, the tree unrolled over a template block size as the CUDA samples'
// reduce kernels write it (`if (blockSize >= 512) { ... }` steps), in an `extern __shared__`
// buffer; each block's partial stored to g_odata[blockIdx.x].
// applier: BlockReduceAtomic
template <unsigned int blockSize>
__global__ void reduce_unrolled(const float *g_idata, float *g_odata, unsigned int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockSize + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0.0f;
    __syncthreads();
    if (blockSize >= 1024) { if (tid < 512) sdata[tid] += sdata[tid + 512]; __syncthreads(); }
    if (blockSize >= 512) { if (tid < 256) sdata[tid] += sdata[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) sdata[tid] += sdata[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads(); }
    if (blockSize >= 64) { if (tid < 32) sdata[tid] += sdata[tid + 32]; __syncthreads(); }
    if (blockSize >= 32) { if (tid < 16) sdata[tid] += sdata[tid + 16]; __syncthreads(); }
    if (blockSize >= 16) { if (tid < 8) sdata[tid] += sdata[tid + 8]; __syncthreads(); }
    if (blockSize >= 8) { if (tid < 4) sdata[tid] += sdata[tid + 4]; __syncthreads(); }
    if (blockSize >= 4) { if (tid < 2) sdata[tid] += sdata[tid + 2]; __syncthreads(); }
    if (blockSize >= 2) { if (tid < 1) sdata[tid] += sdata[tid + 1]; __syncthreads(); }
    if (tid == 0)
        g_odata[blockIdx.x] = sdata[0];
}

template __global__ void reduce_unrolled<512>(const float *, float *, unsigned int);
