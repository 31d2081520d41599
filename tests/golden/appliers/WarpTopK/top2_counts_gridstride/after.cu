// applier: WarpTopK
// The two largest counts of every histogram row (grid-stride over rows), ties to the lower bin.
__global__ void top2_counts(const int *hist, int *top_count, int *top_bin, int nrows, int nbins)
{
    // One warp per row: each lane keeps the top 2 of its own columns with the original insertion,
    // then 2 rounds of a warp arg-max over the lanes' list heads (larger value, then earlier
    // column, then lower lane) merge the lists; lane 0 stores the row's result.

    const int rg_lane_ = threadIdx.x & 31;
    for (long long rg_item_ = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
         rg_item_ < (long long)(nrows); rg_item_ += (long long)gridDim.x * 8) {
        const int h = (int)rg_item_;
        int cnt[2];
        int bin[2];
        for (int s = 0; s < 2; s++) {
                    cnt[s] = -1;
                    bin[s] = -1;
                }
        for (int b = (0) + rg_lane_; b < (nbins); b += 32) {
            int x = hist[h * nbins + b];
            if (x > cnt[0]) {
                            cnt[1] = cnt[0];
                            bin[1] = bin[0];
                            cnt[0] = x;
                            bin[0] = b;
                        } else if (x > cnt[1]) {
                            cnt[1] = x;
                            bin[1] = b;
                        }
        }
        int rg_best_v_[2];
        int rg_best_i_[2];
        int rg_head_ = 0;
    #pragma unroll
        for (int rg_round_ = 0; rg_round_ < 2; ++rg_round_) {
            int rg_v_ = (int)(-1);
            int rg_i_ = (int)(-1);
    #pragma unroll
            for (int rg_q_ = 0; rg_q_ < 2; ++rg_q_) {
                if (rg_q_ == rg_head_) {
                    rg_v_ = cnt[rg_q_];
                    rg_i_ = bin[rg_q_];
                }
            }
            int rg_l_ = rg_lane_;
    #pragma unroll
            for (int rg_offset_ = 16; rg_offset_ > 0; rg_offset_ >>= 1) {
                const int rg_ov_ = __shfl_xor_sync(0xffffffffu, rg_v_, rg_offset_);
                const int rg_oi_ = __shfl_xor_sync(0xffffffffu, rg_i_, rg_offset_);
                const int rg_ol_ = __shfl_xor_sync(0xffffffffu, rg_l_, rg_offset_);
                if (rg_ov_ > rg_v_ || (rg_ov_ == rg_v_ && (rg_oi_ < rg_i_ || (rg_oi_ == rg_i_ && rg_ol_ < rg_l_)))) {
                    rg_v_ = rg_ov_;
                    rg_i_ = rg_oi_;
                    rg_l_ = rg_ol_;
                }
            }
            if (rg_l_ == rg_lane_) ++rg_head_;
            rg_best_v_[rg_round_] = rg_v_;
            rg_best_i_[rg_round_] = rg_i_;
        }
    #pragma unroll
        for (int rg_q_ = 0; rg_q_ < 2; ++rg_q_) {
            cnt[rg_q_] = rg_best_v_[rg_q_];
            bin[rg_q_] = rg_best_i_[rg_q_];
        }
        if (rg_lane_ == 0) {
            for (int s = 0; s < 2; s++) {
                        top_count[2 * h + s] = cnt[s];
                        top_bin[2 * h + s] = bin[s];
                    }
        }
    }
}
