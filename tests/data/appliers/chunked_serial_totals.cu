// applier: ParallelScan
// Exclusive int scan by one block in chunks; thread 0 scans the chunk totals serially in place.
__global__ void chunk_scan_serial_totals(const int *in, int *out, int n)
{
    __shared__ int part[256];
    int tid = threadIdx.x;
    int per = (n + blockDim.x - 1) / blockDim.x;
    int lo = tid * per;
    int hi = min(lo + per, n);
    int s = 0;
    for (int i = lo; i < hi; ++i)
        s += in[i];
    part[tid] = s;
    __syncthreads();
    if (tid == 0) {
        for (int k = 1; k < blockDim.x; ++k)
            part[k] += part[k - 1];
    }
    __syncthreads();
    int run = tid > 0 ? part[tid - 1] : 0;
    for (int i = lo; i < hi; ++i) {
        out[i] = run;
        run += in[i];
    }
}
