// Exclusive prefix sum of a whole double array by one block: each thread totals its chunk,
// the totals go through shared memory, then each thread writes its chunk's prefix sums.
#include <cuda_runtime.h>

__global__ void exclusive_scan_f64(const double *in, double *out, int n)
{
    __shared__ double chunk_total[1024];
    const int tid = threadIdx.x, nthreads = blockDim.x;
    const int per = (n + nthreads - 1) / nthreads;
    const int lo = min(tid * per, n), hi = min(lo + per, n);
    double s = 0.0;
    for (int i = lo; i < hi; ++i)
        s += in[i];
    chunk_total[tid] = s;
    __syncthreads();
    double run = 0.0;
    for (int k = 0; k < tid; ++k)
        run += chunk_total[k];
    for (int i = lo; i < hi; ++i) {
        out[i] = run;
        run += in[i];
    }
}
