// applier: ParallelScan
// C-style pointer walk with post-increment, inclusive.
__global__ void ptr_scan(const float *in, float *out, int n)
{
    const float *p = in;
    float *q = out;
    float acc = 0.0f;
    for (int k = 0; k < n; k++) {
        acc += *p++;
        *q++ = acc;
    }
}
