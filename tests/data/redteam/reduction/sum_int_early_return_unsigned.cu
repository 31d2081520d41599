// Sum of an int array: one atomic per element, early-return guard, unsigned index.
// applier: BlockReduceAtomic
__global__ void total_int(const int *vals, int *total, unsigned n)
{
    unsigned idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx >= n)
        return;
    atomicAdd(total, vals[idx]);
}
