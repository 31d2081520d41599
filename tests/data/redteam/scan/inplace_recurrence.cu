// applier: ParallelScan
// In-place inclusive scan of one array: data[i] += data[i-1].
__global__ void scan_inplace(float *data, int n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int i = 1; i < n; ++i)
            data[i] += data[i - 1];
    }
}
