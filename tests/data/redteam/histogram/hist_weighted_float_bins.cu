// Weighted histogram: float weights summed per bin, the bin loaded from an index array (16 bins).
// applier: PrivatisedHistogram
__global__ void weighted_hist(const int *label, const float *weight, float *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&sums[label[i] & 15], weight[i]);
}
