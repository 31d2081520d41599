// Sum of doubles by one block: each thread strides by blockDim.x, then one atomicAdd.
// applier: BlockReduceAtomic
__global__ void block_sum_f64(const double *x, double *out, int n)
{
    double partial = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        partial += x[i];
    atomicAdd(out, partial);
}
