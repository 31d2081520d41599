#include <cub/cub.cuh>
// Per-block partial sums with a dynamically sized shared buffer (`extern __shared__`, sized by
// the launch) and sequential addressing (`s = blockDim.x / 2; s > 0; s >>= 1`).
#define CHECK_LAUNCH_BOUNDS 512

__global__ void __launch_bounds__(CHECK_LAUNCH_BOUNDS) block_sum_dyn(const float *__restrict in,
                                                                   float *__restrict block_sums, int count)
{
    typedef cub::BlockReduce<float, 128> rg_block_reduce_;
    __shared__ typename rg_block_reduce_::TempStorage rg_temp_;
    float rg_value_ = (float)0;
    // 4 of the original 512 threads' values each: t, t + 128, ...
    #pragma unroll
    for (unsigned int rg_item_ = 0; rg_item_ < 4u; ++rg_item_) {
        const unsigned int rg_thread_ = threadIdx.x + rg_item_ * 128u;
        {
            const int lane = rg_thread_;
            const int gid = blockIdx.x * 512u + lane;
            float v = 0.0f;
            if (gid < count)
                v = in[gid];
            rg_value_ += (float)(v);
        }
    }
    // The block's values combined by CUB (warp shuffles) instead of the shared-memory tree.
    const float rg_total_ = rg_block_reduce_(rg_temp_).Sum(rg_value_);
    if (threadIdx.x == 0)
        block_sums[blockIdx.x] = rg_total_;
}
