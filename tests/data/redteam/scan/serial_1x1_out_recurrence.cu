// applier: ParallelScan
// Textbook "CPU code in a kernel": launched <<<1,1>>>, no guard, out[i] = out[i-1] + in[i].
__global__ void prefixSum(float *in, float *out, int n)
{
    out[0] = in[0];
    for (int i = 1; i < n; i++)
        out[i] = out[i - 1] + in[i];
}
