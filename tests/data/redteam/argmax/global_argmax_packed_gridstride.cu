// Global argmax of non-negative floats: (bits, index) packed into 64 bits, one atomicMax per
// thread after a grid-stride loop keeping the thread's best key.
// applier: BlockReduceAtomic
__global__ void argmax_all(const float *v, unsigned long long *best, int n)
{
    unsigned long long mine = 0ull;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned long long key = ((unsigned long long)__float_as_uint(v[i]) << 32) | (unsigned)i;
        mine = key > mine ? key : mine;
    }
    atomicMax(best, mine);
}
