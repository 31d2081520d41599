// The L1 norm of a vector: per-block sums of |x| through an interleaved shared-memory tree
// (`tid % (2 * s)`), each block's partial added into one result with atomicAdd.
// applier: BlockReduceAtomic
#define THREADS 256

__global__ void l1_norm(const float *x, float *norm, int n)
{
    __shared__ float sdata[THREADS];
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? fabsf(x[i]) : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(norm, sdata[0]);
}
