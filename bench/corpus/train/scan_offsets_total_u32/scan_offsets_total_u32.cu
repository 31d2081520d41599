// Exclusive scan of unsigned segment lengths into offsets, plus the grand total: a serial loop
// that only global thread 0 runs (every other thread of the grid returns at once).
#include <cuda_runtime.h>

__global__ void segment_offsets(const unsigned int *lengths, unsigned int *offsets, unsigned int *total,
                                unsigned int segments)
{
    const unsigned int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gtid != 0)
        return;
    unsigned int next = 0u;
    for (unsigned int s = 0; s < segments; s++) {
        const unsigned int len = lengths[s];
        offsets[s] = next;
        next += len;
    }
    *total = next;
}
