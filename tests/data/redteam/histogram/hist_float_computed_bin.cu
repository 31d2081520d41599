// Histogram of floats in [lo, hi): the bin computed and clamped, int counts, early return.
// applier: PrivatisedHistogram
__global__ void value_hist(const float *vals, int *hist, int n, float lo, float hi, int nbins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int b = (int)((vals[i] - lo) / (hi - lo) * nbins);
    if (b < 0) b = 0;
    if (b >= nbins) b = nbins - 1;
    atomicAdd(hist + b, 1);
}
