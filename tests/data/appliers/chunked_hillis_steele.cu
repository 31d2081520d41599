// applier: ParallelScan
// Inclusive 64-bit scan by one block in chunks; the chunk totals are scanned Hillis-Steele style.
__global__ void chunk_scan_hillis_steele(const long long *x, long long *y, int n)
{
    __shared__ long long sums[512];
    const int tid = threadIdx.x;
    const int per = (n + 511) / 512;
    const int lo = min(tid * per, n);
    const int hi = min(lo + per, n);
    long long mine = 0;
    for (int i = lo; i < hi; i++)
        mine = mine + x[i];
    sums[tid] = mine;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off *= 2) {
        long long add = tid >= off ? sums[tid - off] : 0;
        __syncthreads();
        sums[tid] += add;
        __syncthreads();
    }
    long long acc = sums[tid] - mine;
    for (int i = lo; i < hi; i++) {
        acc += x[i];
        y[i] = acc;
    }
}
