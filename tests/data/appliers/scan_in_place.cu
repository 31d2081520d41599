// applier: ParallelScan
// In-place inclusive scan of ints by thread 0 of a one-block launch: data[k] += data[k - 1].
__global__ void scan_in_place(int *data, int len)
{
    const int lane = threadIdx.x;
    if (lane) return;
    for (int k = 1; k < len; k += 1)
        data[k] += data[k - 1];
}
