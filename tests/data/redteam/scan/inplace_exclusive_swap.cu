// applier: ParallelScan
// In-place exclusive scan: read the element, overwrite it with the running sum, then add.
__global__ void exclusive_inplace(unsigned int *buf, int n)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned int run = 0;
        for (int i = 0; i < n; i++) {
            unsigned int v = buf[i];
            buf[i] = run;
            run += v;
        }
    }
}
