// applier: ParallelScan
// Inclusive scan of ints by one 512-thread block: chunk totals in shared memory, then each thread
// rescans its chunk starting from the totals of the chunks before it.
__global__ void block_chunk_scan(const int *values, int *prefix, int n)
{
    __shared__ int sums[512];
    int chunk = (n + blockDim.x - 1) / blockDim.x;
    int begin = threadIdx.x * chunk;
    int end = min(begin + chunk, n);
    int local = 0;
    for (int i = begin; i < end; i++)
        local += values[i];
    sums[threadIdx.x] = local;
    __syncthreads();
    int offset = 0;
    for (int t = 0; t < threadIdx.x; ++t)
        offset = offset + sums[t];
    for (int i = begin; i < end; i++) {
        offset += values[i];
        prefix[i] = offset;
    }
}
