// applier: ParallelScan
// Indexing through a macro, inclusive scan, thread 0 of block 0.
#define AT(p, i) ((p)[(i)])

__global__ void macro_scan(const float *in, float *out, int len)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        float total = 0.f;
        for (int i = 0; i < len; ++i) {
            total += AT(in, i);
            AT(out, i) = total;
        }
    }
}
