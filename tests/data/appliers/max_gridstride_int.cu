// applier: BlockReduceAtomic
// Largest scaled value, grid-stride with one atomicMax per element.
__global__ void max_scaled(const int *data, int *best, int scale, int count)
{
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x) {
        atomicMax(best, data[k] * scale);
    }
}
