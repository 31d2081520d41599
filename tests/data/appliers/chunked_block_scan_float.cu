// applier: ParallelScan
// Inclusive float scan by one block in per-thread chunks (64-bit positions), squares of the input.
#define THREADS 256

__global__ void chunked_square_scan(const float *x, float *y, long long count)
{
    __shared__ float chunk_sum[THREADS];
    const long long me = threadIdx.x;
    const long long span = (count + THREADS - 1) / THREADS;
    const long long from = me * span < count ? me * span : count;
    const long long to = from + span < count ? from + span : count;
    float partial = 0.0f;
    for (long long p = from; p < to; ++p)
        partial += x[p] * x[p];
    chunk_sum[me] = partial;
    __syncthreads();
    float before = 0.0f;
    for (long long q = 0; q < me; ++q)
        before += chunk_sum[q];
    for (long long p = from; p < to; ++p) {
        const float v = x[p];
        before += v * v;
        y[p] = before;
    }
}
