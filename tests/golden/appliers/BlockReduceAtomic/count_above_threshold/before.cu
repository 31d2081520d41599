// applier: BlockReduceAtomic
// How many values exceed a threshold: a conditional atomic counter.
__global__ void count_above(const float *values, unsigned int *count, float threshold, int n)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) {
        if (values[i] > threshold)
            atomicAdd(count, 1u);
    }
}
