#include <cub/cub.cuh>
// applier: BlockReduceAtomic
// One thread adds up the whole array.
__global__ void l1_norm(const float *v, float *norm, int len)
{
    // one 1024-thread block per item: lanes stride over the item's elements (coalesced), CUB combines the lanes' partial results.
    typedef cub::BlockReduce<float, 1024> rg_block_reduce_float_;
    __shared__ typename rg_block_reduce_float_::TempStorage rg_block_reduce_float_temp;
    __shared__ float rg_block_reduce_float_result;
    const int rg_lane_ = threadIdx.x;
    if (blockIdx.x == 0) {
        float s = 0.0f;
        {
            const float rg_init_s_ = s;
            s = (float)0;
            #pragma unroll 4
            for (int i = (0) + rg_lane_; i < (len); i += 1024) {
                s += fabsf(v[i]);
            }
            {
                const float rg_total_ = rg_block_reduce_float_(rg_block_reduce_float_temp).Sum(s);
                if (threadIdx.x == 0) rg_block_reduce_float_result = rg_total_;
                __syncthreads();
                s = rg_init_s_ + rg_block_reduce_float_result;
                __syncthreads();
            }
        }
        if (rg_lane_ == 0) {
            *norm = s;
        }
    }
}
