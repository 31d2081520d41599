// applier: ParallelScan
// Inclusive scan of unsigned values with a while loop and unsigned counters.
__global__ void scan_u32(const unsigned int *a, unsigned int *b, unsigned int n)
{
    if (threadIdx.x == 0) {
        unsigned int s = 0u;
        unsigned int i = 0u;
        while (i < n) {
            s += a[i];
            b[i] = s;
            ++i;
        }
    }
}
