// applier: BlockReduceAtomic
// Each thread sums its own contiguous chunk, then one atomic per thread.
__global__ void chunk_sum(const double *x, double *total, long long n, int per_thread)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    double partial = 0.0;
    for (int k = 0; k < per_thread; ++k) {
        long long e = t * per_thread + k;
        if (e < n) partial += x[e];
    }
    atomicAdd(total, partial);
}
