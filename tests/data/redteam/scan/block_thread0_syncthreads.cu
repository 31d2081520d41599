// applier: ParallelScan
// One block of 256 threads launched; thread 0 scans, the block waits for it.
__global__ void scan_block_wait(const float *in, float *out, int n)
{
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < n; i++) {
            s += in[i];
            out[i] = s;
        }
    }
    __syncthreads();
}
