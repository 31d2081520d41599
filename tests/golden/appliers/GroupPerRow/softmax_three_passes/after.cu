#include <cub/cub.cuh>
// applier: GroupPerRow
// Row softmax, one thread per row, three passes through a row pointer.
__global__ void softmax_rows(const float *logits, float *probs, int rows, int cols)
{
    // one warp per item (256-thread blocks): lanes stride over the item's elements (coalesced), CUB combines the lanes' partial results.
    typedef cub::WarpReduce<float, 32> rg_warp_reduce_float_;
    __shared__ typename rg_warp_reduce_float_::TempStorage rg_warp_reduce_float_temp[8];
    struct rg_max_float_fmaxf_ {
        __device__ __forceinline__ float operator()(const float &a, const float &b) const { return fmaxf(a, b); }
    };
    const int rg_lane_ = (threadIdx.x & 31);
    for (long long rg_item_ = (long long)blockIdx.x * 8 + threadIdx.x / 32; rg_item_ < (long long)(rows); rg_item_ += (long long)gridDim.x * 8) {
        const int row = (int)rg_item_;
        const float *in = logits + (size_t)row * cols;
        float *out = probs + (size_t)row * cols;
        float m = -3.0e38f;
        {
            #pragma unroll 4
            for (int j = (0) + rg_lane_; j < (cols); j += 32) {
                m = fmaxf(m, in[j]);
            }
            {
                const float rg_total_ = rg_warp_reduce_float_(rg_warp_reduce_float_temp[threadIdx.x / 32]).Reduce(m, rg_max_float_fmaxf_());
                m = __shfl_sync(0xffffffffu, rg_total_, 0);
                __syncwarp(0xffffffffu);
            }
        }
        float denom = 0.0f;
        {
            const float rg_init_denom_ = denom;
            denom = (float)0;
            #pragma unroll 4
            for (int j = (0) + rg_lane_; j < (cols); j += 32) {
                denom += __expf(in[j] - m);
            }
            {
                const float rg_total_ = rg_warp_reduce_float_(rg_warp_reduce_float_temp[threadIdx.x / 32]).Sum(denom);
                denom = rg_init_denom_ + __shfl_sync(0xffffffffu, rg_total_, 0);
                __syncwarp(0xffffffffu);
            }
        }
        const float inv = 1.0f / denom;
        #pragma unroll 4
        for (int j = (0) + rg_lane_; j < (cols); j += 32) {
            out[j] = __expf(in[j] - m) * inv;
        }
    }
}
