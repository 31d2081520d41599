// applier: BlockReduceAtomic
// Per-block partial sums of a float array (the first pass of a two-pass sum): the block size is
// a template parameter, each thread first adds two elements a block apart, the tree is
// unrolled over the block size in an extern shared buffer, and block b writes partials[b].

template <unsigned int blockSize>
__global__ void block_partials(const float *in, float *partials, unsigned int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    float sum = 0.0f;
    if (i < n)
        sum = in[i];
    if (i + blockSize < n)
        sum += in[i + blockSize];
    sdata[tid] = sum;
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) sdata[tid] = sum = sum + sdata[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) sdata[tid] = sum = sum + sdata[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) sdata[tid] = sum = sum + sdata[tid + 64]; __syncthreads(); }
    if (blockSize >= 64) { if (tid < 32) sdata[tid] = sum = sum + sdata[tid + 32]; __syncthreads(); }
    if (blockSize >= 32) { if (tid < 16) sdata[tid] = sum = sum + sdata[tid + 16]; __syncthreads(); }
    if (blockSize >= 16) { if (tid < 8) sdata[tid] = sum = sum + sdata[tid + 8]; __syncthreads(); }
    if (blockSize >= 8) { if (tid < 4) sdata[tid] = sum = sum + sdata[tid + 4]; __syncthreads(); }
    if (blockSize >= 4) { if (tid < 2) sdata[tid] = sum = sum + sdata[tid + 2]; __syncthreads(); }
    if (blockSize >= 2) { if (tid < 1) sdata[tid] = sum = sum + sdata[tid + 1]; __syncthreads(); }
    if (tid == 0)
        partials[blockIdx.x] = sum;
}

template __global__ void block_partials<256>(const float *, float *, unsigned int);
