// applier: ParallelScan
// Loads into a temporary first, then accumulates and stores (port of a CPU loop).
__global__ void cumulative(const float *values, float *result, int count)
{
    int gid = blockDim.x * blockIdx.x + threadIdx.x;
    if (gid > 0)
        return;
    float partial = 0;
    for (int idx = 0; idx < count; idx++) {
        float v = values[idx];
        partial = partial + v;
        result[idx] = partial;
    }
}
