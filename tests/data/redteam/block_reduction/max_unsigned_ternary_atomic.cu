// The largest key of an unsigned array, each thread first taking the larger of two keys a
// block apart; the tree picks with `a > b ? a : b` and the result is held in a local, then one
// atomicMax per block into keys_max[0].
// applier: BlockReduceAtomic
template <unsigned int blockSize>
__global__ void max_key(const unsigned int *keys, unsigned int *keys_max, unsigned int n)
{
    extern __shared__ unsigned int top[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (2 * blockSize) + tid;
    unsigned int mine = (i < n) ? keys[i] : 0u;
    if (i + blockSize < n)
        mine = keys[i + blockSize] > mine ? keys[i + blockSize] : mine;
    top[tid] = mine;
    __syncthreads();
    for (unsigned int s = blockSize / 2; s > 0; s >>= 1) {
        if (tid < s) {
            unsigned int other = top[tid + s];
            top[tid] = mine = other > mine ? other : mine;
        }
        __syncthreads();
    }
    if (tid == 0)
        atomicMax(&keys_max[0], mine);
}

template __global__ void max_key<256>(const unsigned int *, unsigned int *, unsigned int);
