// applier: ParallelScan
// Inclusive scan of a whole array by one thread.
__global__ void prefix_sum(const float *in, float *out, int n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float acc = 0.0f;
        for (int i = 0; i < n; ++i) {
            acc = acc + in[i];
            out[i] = acc;
        }
    }
}
