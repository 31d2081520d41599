// Per-block maxima of doubles over a template block size, the halving loop driven by the
// template parameter and fmax as the combine; each block's maximum stored to out[blockIdx.x].
// applier: BlockReduceAtomic
template <int BLOCK>
__global__ void block_max(const double *src, double *out, int len)
{
    __shared__ double peak[BLOCK];
    const int t = threadIdx.x;
    const int at = blockIdx.x * BLOCK + t;
    peak[t] = at < len ? src[at] : -1.0e300;
    __syncthreads();
    for (int half = BLOCK / 2; half >= 1; half /= 2) {
        if (t < half)
            peak[t] = fmax(peak[t], peak[t + half]);
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = peak[0];
}

template __global__ void block_max<128>(const double *, double *, int);
