#include <cub/cub.cuh>
// applier: ParallelScan
// Inclusive scan of a whole array by one thread.
// Look-back state of prefix_sum's single-pass scan: per tile a flag (launch epoch, state) and
// its total and inclusive prefix (8-byte slots); the tile ticket, finished blocks, launch epoch.
__device__ unsigned int rg_prefix_sum_flag[1048576];
__device__ unsigned long long rg_prefix_sum_aggregate[1048576], rg_prefix_sum_inclusive[1048576];
__device__ unsigned int rg_prefix_sum_ticket, rg_prefix_sum_finished, rg_prefix_sum_epoch;

__global__ __launch_bounds__(512) void prefix_sum(const float *in, float *out, int n)
{
    // Single-pass scan: blocks take tiles of 4096 positions in order (atomic ticket), load them
    // warp-striped, scan them with cub::BlockScan (8 per thread) and find the tile's prefix by
    // looking back at earlier tiles, 32 at a time.
    float acc = 0.0f;
    static_assert(sizeof(float) <= sizeof(unsigned long long), "look-back slots hold 8 bytes");
    typedef cub::BlockExchange<float, 512, 8> rg_exchange_t_;
    typedef cub::BlockScan<float, 512, cub::BLOCK_SCAN_RAKING> rg_scan_t_;
    __shared__ union {
        typename rg_exchange_t_::TempStorage exchange;
        typename rg_scan_t_::TempStorage scan;
    } rg_temp_;
    __shared__ unsigned int rg_tile_shared_, rg_epoch_shared_;
    __shared__ float rg_prefix_shared_;
    const float rg_start_ = acc;
    const long long rg_lower_ = (long long)(0), rg_upper_ = (long long)(n);
    const long long rg_tiles_ = rg_upper_ > rg_lower_ ? (rg_upper_ - rg_lower_ + 4095) / 4096 : 0;
    if (rg_tiles_ > 1048576) __trap();  // more tiles than status words
    const unsigned int rg_lane_ = threadIdx.x & 31u, rg_warp_ = threadIdx.x >> 5;
    if (threadIdx.x == 0) rg_epoch_shared_ = *(volatile unsigned int *)&rg_prefix_sum_epoch;
    __syncthreads();
    const unsigned int rg_tag_ = (rg_epoch_shared_ % 0x3fffffffu) + 1u;  // 30 bits, never 0 (a cleared flag)
    if (rg_tiles_ == 0 && blockIdx.x == 0 && threadIdx.x == 0) {

    }
    while (true) {
        if (threadIdx.x == 0) rg_tile_shared_ = atomicAdd(&rg_prefix_sum_ticket, 1u);
        __syncthreads();
        const long long rg_tile_ = rg_tile_shared_;
        if (rg_tile_ >= rg_tiles_) break;
        // Warp-striped positions: warp w holds [w * 256, (w + 1) * 256) of the tile.
        const long long rg_first_ = rg_lower_ + rg_tile_ * 4096 + (long long)rg_warp_ * 256 + rg_lane_;
        float rg_values_[8], rg_scanned_[8];
    #pragma unroll
        for (int rg_k_ = 0; rg_k_ < 8; ++rg_k_) {
            const long long rg_pos_ = rg_first_ + rg_k_ * 32;
            float rg_value_ = (float)0;
            if (rg_pos_ < rg_upper_) {
                const int i = (int)rg_pos_;

                rg_value_ = (in[i]);
            }
            rg_values_[rg_k_] = rg_value_;
            rg_scanned_[rg_k_] = rg_value_;
        }
        rg_exchange_t_(rg_temp_.exchange).WarpStripedToBlocked(rg_scanned_);
        __syncthreads();
        float rg_tile_total_;
        rg_scan_t_(rg_temp_.scan).InclusiveSum(rg_scanned_, rg_scanned_, rg_tile_total_);
        if (rg_warp_ == 0) {
            float rg_exclusive_ = (float)0;
            if (rg_tile_ == 0) {
                if (rg_lane_ == 0) {
                    *(volatile float *)&rg_prefix_sum_inclusive[0] = rg_tile_total_;
                    __threadfence();
                    atomicExch(&rg_prefix_sum_flag[0], (rg_tag_ << 2) | 2u);
                }
            } else {
                if (rg_lane_ == 0) {
                    *(volatile float *)&rg_prefix_sum_aggregate[rg_tile_] = rg_tile_total_;
                    __threadfence();
                    atomicExch(&rg_prefix_sum_flag[rg_tile_], (rg_tag_ << 2) | 1u);
                }
                // Lane l looks at tile (end - l); the nearest inclusive prefix ends the walk.
                for (long long rg_end_ = rg_tile_ - 1; ; rg_end_ -= 32) {
                    const long long rg_look_ = rg_end_ - (long long)rg_lane_;
                    unsigned int rg_state_ = 2u;
                    float rg_found_ = (float)0;
                    if (rg_look_ >= 0) {
                        do {
                            rg_state_ = *(volatile unsigned int *)&rg_prefix_sum_flag[rg_look_];
                        } while ((rg_state_ >> 2) != rg_tag_);
                        __threadfence();
                        rg_state_ &= 3u;
                        rg_found_ = rg_state_ == 2u ? *(volatile float *)&rg_prefix_sum_inclusive[rg_look_]
                                                    : *(volatile float *)&rg_prefix_sum_aggregate[rg_look_];
                    }
                    const unsigned int rg_done_ = __ballot_sync(0xffffffffu, rg_state_ == 2u);
                    if (rg_done_ != 0u && rg_lane_ > (unsigned int)(__ffs(rg_done_) - 1)) rg_found_ = (float)0;
    #pragma unroll
                    for (int rg_offset_ = 16; rg_offset_ > 0; rg_offset_ >>= 1) {
                        // every lane shuffles, unconditionally: a comparison operator names its
                        // arguments twice, and a __shfl_xor_sync on one side of `?:` would be
                        // reached by some lanes only (a warp-synchronous hang)
                        const float rg_other_ = __shfl_xor_sync(0xffffffffu, rg_found_, rg_offset_);
                        rg_found_ += rg_other_;
                    }
                    rg_exclusive_ += rg_found_;
                    if (rg_done_ != 0u) break;
                }
                if (rg_lane_ == 0) {
                    *(volatile float *)&rg_prefix_sum_inclusive[rg_tile_] = rg_exclusive_ + rg_tile_total_;
                    __threadfence();
                    atomicExch(&rg_prefix_sum_flag[rg_tile_], (rg_tag_ << 2) | 2u);
                }
            }
            if (rg_lane_ == 0) rg_prefix_shared_ = rg_exclusive_;
        }
        __syncthreads();
        rg_exchange_t_(rg_temp_.exchange).BlockedToWarpStriped(rg_scanned_);
        const float rg_prefix_ = rg_start_ + rg_prefix_shared_;
    #pragma unroll
        for (int rg_k_ = 0; rg_k_ < 8; ++rg_k_) {
            const long long rg_pos_ = rg_first_ + rg_k_ * 32;
            if (rg_pos_ < rg_upper_) {
                const int i = (int)rg_pos_;

                acc = rg_prefix_ + rg_scanned_[rg_k_] - rg_values_[rg_k_];
                acc = rg_prefix_ + rg_scanned_[rg_k_];
                out[i] = acc;
            }
        }
        if (rg_tile_ == rg_tiles_ - 1 && threadIdx.x == 0) {
            acc = rg_prefix_ + rg_tile_total_;

        }
        __syncthreads();
    }
    // The last block to finish readies the ticket for the next launch and advances the epoch.
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&rg_prefix_sum_finished, 1u) == gridDim.x - 1) {
            rg_prefix_sum_ticket = 0;
            rg_prefix_sum_finished = 0;
            atomicAdd(&rg_prefix_sum_epoch, 1u);
            __threadfence();
        }
    }
}
