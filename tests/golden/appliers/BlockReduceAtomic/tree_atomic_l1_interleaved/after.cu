#include <cub/cub.cuh>
// The L1 norm of a vector: per-block sums of |x| through an interleaved shared-memory tree
// (`tid % (2 * s)`), each block's partial added into one result with atomicAdd.
// applier: BlockReduceAtomic
#define THREADS 256

__global__ void l1_norm(const float *x, float *norm, int n)
{
    typedef cub::BlockReduce<float, 256> rg_block_reduce_;
    __shared__ typename rg_block_reduce_::TempStorage rg_temp_;
    float rg_value_;
    {
        unsigned int tid = threadIdx.x;
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        rg_value_ = (float)((i < n) ? fabsf(x[i]) : 0.0f);
    }
    // The block's values combined by CUB (warp shuffles) instead of the shared-memory tree.
    const float rg_total_ = rg_block_reduce_(rg_temp_).Sum(rg_value_);
    if (threadIdx.x == 0)
        atomicAdd(norm, rg_total_);
}
