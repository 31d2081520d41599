#include <cub/cub.cuh>
// A whole-array sum, the samples' reduce4 steps with a running sum (`sdata[tid] = mySum =
// mySum + ...`, the step's guard and the block size in one condition) over a template block
// size, every step behind a barrier, and one atomicAdd per block.
// applier: BlockReduceAtomic
template <class T, unsigned int blockSize>
__global__ void reduce_total(const T *g_idata, T *g_total, unsigned int n)
{
    static_assert(blockSize == 256, "rewritten for blockSize = 256");
    typedef cub::BlockReduce<T, 256> rg_block_reduce_;
    __shared__ typename rg_block_reduce_::TempStorage rg_temp_;
    T rg_value_;
    {
        unsigned int tid = threadIdx.x;
        unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
        T mySum = (i < n) ? g_idata[i] : 0;
        if (i + blockSize < n)
            mySum += g_idata[i + blockSize];
        rg_value_ = (T)(mySum);
    }
    // The block's values combined by CUB (warp shuffles) instead of the shared-memory tree.
    const T rg_total_ = rg_block_reduce_(rg_temp_).Sum(rg_value_);
    if (threadIdx.x == 0)
        atomicAdd(g_total, rg_total_);
}

template __global__ void reduce_total<float, 256>(const float *, float *, unsigned int);
