// applier: ColumnSplitReduction
// Sum of every column of a row-major matrix, one thread per column.
__global__ void column_sum(const float *m, float *sums, int rows, int cols)
{
    // Tiles of 32 columns, 128 threads per column: each thread owns 4 columns 8 apart and
    // sums a strided share of their rows (4 coalesced loads in flight per row), the shares are combined in shared memory.
    __shared__ float rg_shares_s_[128][32];
    const int rg_w_ = threadIdx.x % 8, rg_h_ = threadIdx.x / 8;
    const long long rg_columns_ = (long long)(cols);
    for (long long rg_tile_ = blockIdx.x; rg_tile_ * 32 < rg_columns_; rg_tile_ += gridDim.x) {
        const long long rg_column_ = rg_tile_ * 32 + rg_w_;
        // Threads past the last column repeat it (every thread must reach the barriers) and write nothing.
        const int rg_c_0_ = (int)(rg_column_ + 0 < rg_columns_ ? rg_column_ + 0 : rg_columns_ - 1);
        const int rg_c_1_ = (int)(rg_column_ + 8 < rg_columns_ ? rg_column_ + 8 : rg_columns_ - 1);
        const int rg_c_2_ = (int)(rg_column_ + 16 < rg_columns_ ? rg_column_ + 16 : rg_columns_ - 1);
        const int rg_c_3_ = (int)(rg_column_ + 24 < rg_columns_ ? rg_column_ + 24 : rg_columns_ - 1);
        float rg_s_0_ = 0.0f;
        float rg_s_1_ = 0.0f;
        float rg_s_2_ = 0.0f;
        float rg_s_3_ = 0.0f;
        {
            const float rg_init_rg_s_0_ = rg_s_0_;
            rg_s_0_ = (float)0;
            const float rg_init_rg_s_1_ = rg_s_1_;
            rg_s_1_ = (float)0;
            const float rg_init_rg_s_2_ = rg_s_2_;
            rg_s_2_ = (float)0;
            const float rg_init_rg_s_3_ = rg_s_3_;
            rg_s_3_ = (float)0;
            #pragma unroll 4
            for (int r = (0) + rg_h_; r < (rows); r += 128) {
                rg_s_0_ += m[r * cols + rg_c_0_];
                rg_s_1_ += m[r * cols + rg_c_1_];
                rg_s_2_ += m[r * cols + rg_c_2_];
                rg_s_3_ += m[r * cols + rg_c_3_];
            }
            // Combine the row shares of each column (a shared-memory tree).
            rg_shares_s_[rg_h_][0 + rg_w_] = rg_s_0_;
            rg_shares_s_[rg_h_][8 + rg_w_] = rg_s_1_;
            rg_shares_s_[rg_h_][16 + rg_w_] = rg_s_2_;
            rg_shares_s_[rg_h_][24 + rg_w_] = rg_s_3_;
            __syncthreads();
            for (int rg_half_ = 64; rg_half_ > 0; rg_half_ >>= 1) {
                if (rg_h_ < rg_half_) {
                    { const float rg_a_ = rg_shares_s_[rg_h_][0 + rg_w_], rg_b_ = rg_shares_s_[rg_h_ + rg_half_][0 + rg_w_]; rg_shares_s_[rg_h_][0 + rg_w_] = rg_a_ + rg_b_; }
                    { const float rg_a_ = rg_shares_s_[rg_h_][8 + rg_w_], rg_b_ = rg_shares_s_[rg_h_ + rg_half_][8 + rg_w_]; rg_shares_s_[rg_h_][8 + rg_w_] = rg_a_ + rg_b_; }
                    { const float rg_a_ = rg_shares_s_[rg_h_][16 + rg_w_], rg_b_ = rg_shares_s_[rg_h_ + rg_half_][16 + rg_w_]; rg_shares_s_[rg_h_][16 + rg_w_] = rg_a_ + rg_b_; }
                    { const float rg_a_ = rg_shares_s_[rg_h_][24 + rg_w_], rg_b_ = rg_shares_s_[rg_h_ + rg_half_][24 + rg_w_]; rg_shares_s_[rg_h_][24 + rg_w_] = rg_a_ + rg_b_; }
                }
                __syncthreads();
            }
            rg_s_0_ = rg_init_rg_s_0_ + rg_shares_s_[0][0 + rg_w_];
            rg_s_1_ = rg_init_rg_s_1_ + rg_shares_s_[0][8 + rg_w_];
            rg_s_2_ = rg_init_rg_s_2_ + rg_shares_s_[0][16 + rg_w_];
            rg_s_3_ = rg_init_rg_s_3_ + rg_shares_s_[0][24 + rg_w_];
            __syncthreads();
        }
        if (rg_h_ == 0) {
            if (rg_column_ + 0 < rg_columns_) {
                sums[rg_c_0_] = rg_s_0_;
            }
            if (rg_column_ + 8 < rg_columns_) {
                sums[rg_c_1_] = rg_s_1_;
            }
            if (rg_column_ + 16 < rg_columns_) {
                sums[rg_c_2_] = rg_s_2_;
            }
            if (rg_column_ + 24 < rg_columns_) {
                sums[rg_c_3_] = rg_s_3_;
            }
        }
    }
}
