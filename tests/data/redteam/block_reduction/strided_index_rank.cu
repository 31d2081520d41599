// Per-block partial counts of an int array: strided shared index (`index = 2 * s * tid`), the
// thread's rank and the barrier from cooperative groups, GNU `__restrict__` spelled
// `__restrict`, and the element read through an index macro.
// applier: BlockReduceAtomic
#include <cooperative_groups.h>

#define ELEM(p, k) ((p)[(k)])
#define THREADS 128

__global__ void partial_count(const int *__restrict flags, int *__restrict per_block, int n)
{
    cooperative_groups::thread_block block = cooperative_groups::this_thread_block();
    __shared__ int counts[THREADS];
    unsigned int t = block.thread_rank();
    unsigned int g = blockIdx.x * THREADS + t;
    counts[t] = g < n ? ELEM(flags, g) : 0;
    block.sync();
    for (unsigned int s = 1; s < THREADS; s <<= 1) {
        unsigned int index = 2 * s * t;
        if (index < THREADS)
            counts[index] += counts[index + s];
        block.sync();
    }
    if (t == 0)
        ELEM(per_block, blockIdx.x) = counts[0];
}
