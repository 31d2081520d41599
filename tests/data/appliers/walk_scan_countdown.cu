// applier: ParallelScan
// Inclusive float scan walking both parameter pointers while a count runs down; thread 0 only.
__global__ void cumsum_walk(const float *in, float *out, int n)
{
    if (threadIdx.x != 0) return;
    float acc = 0.f;
    while (n--) {
        acc += *in++;
        *out++ = acc;
    }
}
