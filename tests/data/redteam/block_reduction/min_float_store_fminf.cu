// Per-block minima of a float array (a first pass of a two-pass min): an interleaved tree
// with fminf over a strided index, each block's minimum stored to block_min[blockIdx.x].
// applier: BlockReduceAtomic
__global__ void block_minima(const float *in, float *block_min, int n)
{
    __shared__ float lows[128];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * 128 + t;
    float v = 3.0e38f;
    if (i < n)
        v = in[i];
    lows[t] = v;
    __syncthreads();
    for (unsigned int s = 1; s < 128; s <<= 1) {
        unsigned int index = 2 * s * t;
        if (index < 128)
            lows[index] = fminf(lows[index], lows[index + s]);
        __syncthreads();
    }
    if (t == 0)
        block_min[blockIdx.x] = lows[0];
}
