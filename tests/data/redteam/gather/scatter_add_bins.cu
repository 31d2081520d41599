// Scatter-add into a small table (64 slots) through an index array, float atomics.
// applier: PrivatisedHistogram
__global__ void scatter_add_small(const float *vals, const int *slot, float *table, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = slot[i];
        atomicAdd(table + s, vals[i]);
    }
}
