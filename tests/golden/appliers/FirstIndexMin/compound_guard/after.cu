// Index of the first negative element (n if none): every thread whose element is negative
// lowers the answer with atomicMin.
#include <cuda_runtime.h>

__global__ void first_negative(const float *x, int *first, int n)
{
    // The least index whose predicate holds: blocks take tiles of blockDim.x x 4 indices in
    // increasing order, keep each tile's least hit (warp shuffles, a shared atomicMin per warp) and
    // publish it with one atomicMin per block; a block stops once *first is at or below its next tile.

    __shared__ long long rg_block_best_;
    __shared__ int rg_stop_;
    const long long rg_n_ = (long long)(n);
    const long long rg_span_ = (long long)blockDim.x * 4;
    const long long rg_none_ = 0x7fffffffffffffffLL;
    for (long long rg_tile_ = (long long)blockIdx.x * rg_span_; rg_tile_ < rg_n_; rg_tile_ += (long long)gridDim.x * rg_span_) {
        if (threadIdx.x == 0) {
            rg_block_best_ = rg_none_;
            // every index of this tile (and of this block's later tiles) is at least tile_
            rg_stop_ = *(volatile int *)first <= (int)rg_tile_;
        }
        __syncthreads();
        if (rg_stop_) break;
        long long rg_mine_ = rg_none_;
    #pragma unroll
        for (int rg_k_ = 0; rg_k_ < 4; ++rg_k_) {
            const long long rg_pos_ = rg_tile_ + (long long)rg_k_ * blockDim.x + threadIdx.x;
            if (rg_pos_ < rg_n_ && rg_mine_ == rg_none_) {
                const int i = (int)rg_pos_;

                if ((x[i] < 0.0f)) rg_mine_ = rg_pos_;
            }
        }
    #pragma unroll
        for (int rg_offset_ = 16; rg_offset_ > 0; rg_offset_ >>= 1)
            rg_mine_ = min(rg_mine_, __shfl_xor_sync(0xffffffffu, rg_mine_, rg_offset_));
        if ((threadIdx.x & 31u) == 0 && rg_mine_ != rg_none_) atomicMin(&rg_block_best_, rg_mine_);
        __syncthreads();
        if (threadIdx.x == 0 && rg_block_best_ != rg_none_) atomicMin(first, (int)rg_block_best_);
        __syncthreads();
    }
}
