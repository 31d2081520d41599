// applier: ParallelScan
// Inclusive scan by one block in three phases through the output itself: each thread scans its
// chunk in place, then adds the last sums of the chunks before it.
__global__ void scan_then_fix(const int *in, int *out, int n)
{
    const int t = threadIdx.x;
    const int chunk = (n + blockDim.x - 1) / blockDim.x;
    const int first = t * chunk;
    const int last = min(first + chunk, n);
    int sum = 0;
    for (int i = first; i < last; ++i) {
        sum += in[i];
        out[i] = sum;
    }
    __syncthreads();
    int offset = 0;
    for (int u = 0; u < t; ++u) {
        int end = min((u + 1) * chunk, n) - 1;
        if (end >= u * chunk)
            offset += out[end];
    }
    __syncthreads();
    for (int i = first; i < last; ++i)
        out[i] += offset;
}
