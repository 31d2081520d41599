// applier: ParallelScan
// Largest value strictly before each position (an exclusive running maximum) of a double series;
// 64-bit indices.
__global__ void prior_max(const double *v, double *out, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double best = -1.0e300;
        for (long long j = 0; j < i; ++j)
            best = fmax(best, v[j]);
        out[i] = best;
    }
}
