// applier: ParallelScan
// 64-bit count, int loop variable cast up, explicit cast of the input.
__global__ void scan_i2f(const int *in, float *out, long long n)
{
    if (blockIdx.x * blockDim.x + threadIdx.x == 0) {
        float acc = 0.0f;
        for (long long i = 0; i < n; i += 1) {
            acc += (float)in[i];
            out[i] = acc;
        }
    }
}
