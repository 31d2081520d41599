// applier: ParallelScan
// Exclusive float scan by one 256-thread block: thread 0 turns the chunk ends into offsets in a
// shared array, then every thread rewrites its chunk; early return for threads past the data.
#define THREADS 256

__global__ void offsets_by_block(const float *x, float *y, int len)
{
    __shared__ float base[THREADS];
    int tid = threadIdx.x;
    int per = (len + THREADS - 1) / THREADS;
    int lo = tid * per;
    int hi = lo + per < len ? lo + per : len;
    float run = 0.0f;
    for (int i = lo; i < hi; i++) {
        float v = x[i];
        y[i] = run;
        run += v;
    }
    base[tid] = run;
    __syncthreads();
    if (tid == 0) {
        float acc = 0.0f;
        for (int k = 0; k < THREADS; k++) {
            float next = acc + base[k];
            base[k] = acc;
            acc = next;
        }
    }
    __syncthreads();
    if (lo >= len) return;
    for (int i = lo; i < hi; i++)
        y[i] += base[tid];
}
