// applier: ParallelScan
// Exclusive scan of 64-bit counts by one block; chunk size rounded up with a remainder test.
__global__ void offsets_u64(const unsigned long long *counts, unsigned long long *offsets, unsigned int n)
{
    __shared__ unsigned long long totals[1024];
    const unsigned int t = threadIdx.x;
    const unsigned int per = n / blockDim.x + (n % blockDim.x != 0);
    const unsigned int lo = t * per;
    const unsigned int hi = lo + per < n ? lo + per : n;
    unsigned long long mine = 0;
    for (unsigned int i = lo; i < hi; ++i)
        mine += counts[i];
    totals[t] = mine;
    __syncthreads();
    unsigned long long base = 0;
    for (unsigned int k = 0; k < t; ++k)
        base += totals[k];
    for (unsigned int i = lo; i < hi; ++i) {
        offsets[i] = base;
        base += counts[i];
    }
}
