#include <cub/cub.cuh>
// The largest element of an int array: per-block maxima through a sequential-addressing tree
// with max(), then one atomicMax per block into the result.
// applier: BlockReduceAtomic
#include <climits>

__global__ void array_max(const int *a, int *result, int n)
{
    typedef cub::BlockReduce<int, 128> rg_block_reduce_;
    __shared__ typename rg_block_reduce_::TempStorage rg_temp_;
    struct rg_op_ { __device__ __forceinline__ int operator()(const int &a, const int &b) const { return max(a, b); } };
    int rg_value_ = (int)0;
    // 2 of the original 256 threads' values each: t, t + 128, ...
    #pragma unroll
    for (unsigned int rg_item_ = 0; rg_item_ < 2u; ++rg_item_) {
        const unsigned int rg_thread_ = threadIdx.x + rg_item_ * 128u;
        {
            int tid = rg_thread_;
            int gid = blockIdx.x * 256u + tid;
            const int rg_item_value_ = (int)(gid < n ? a[gid] : INT_MIN);
            rg_value_ = rg_item_ == 0u ? rg_item_value_ : rg_op_()(rg_value_, rg_item_value_);
        }
    }
    // The block's values combined by CUB (warp shuffles) instead of the shared-memory tree.
    const int rg_total_ = rg_block_reduce_(rg_temp_).Reduce(rg_value_, rg_op_());
    if (threadIdx.x == 0)
        atomicMax(result, rg_total_);
}
