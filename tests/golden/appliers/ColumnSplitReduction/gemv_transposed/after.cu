// applier: ColumnSplitReduction
// y = A^T x: thread j walks down column j.
__global__ void gemv_t(const float *A, const float *x, float *y, int m, int n)
{
    // Tiles of 32 columns, 32 threads per column: each thread owns 4 columns 8 apart and
    // sums a strided share of their rows (4 coalesced loads in flight per row), the shares are combined in shared memory.
    __shared__ float rg_shares_acc_[32][32];
    const int rg_w_ = threadIdx.x % 8, rg_h_ = threadIdx.x / 8;
    const long long rg_columns_ = (long long)(n);
    for (long long rg_tile_ = blockIdx.x; rg_tile_ * 32 < rg_columns_; rg_tile_ += gridDim.x) {
        const long long rg_column_ = rg_tile_ * 32 + rg_w_;
        // Threads past the last column repeat it (every thread must reach the barriers) and write nothing.
        const int rg_j_0_ = (int)(rg_column_ + 0 < rg_columns_ ? rg_column_ + 0 : rg_columns_ - 1);
        const int rg_j_1_ = (int)(rg_column_ + 8 < rg_columns_ ? rg_column_ + 8 : rg_columns_ - 1);
        const int rg_j_2_ = (int)(rg_column_ + 16 < rg_columns_ ? rg_column_ + 16 : rg_columns_ - 1);
        const int rg_j_3_ = (int)(rg_column_ + 24 < rg_columns_ ? rg_column_ + 24 : rg_columns_ - 1);
        float rg_acc_0_ = 0.0f;
        float rg_acc_1_ = 0.0f;
        float rg_acc_2_ = 0.0f;
        float rg_acc_3_ = 0.0f;
        {
            const float rg_init_rg_acc_0_ = rg_acc_0_;
            rg_acc_0_ = (float)0;
            const float rg_init_rg_acc_1_ = rg_acc_1_;
            rg_acc_1_ = (float)0;
            const float rg_init_rg_acc_2_ = rg_acc_2_;
            rg_acc_2_ = (float)0;
            const float rg_init_rg_acc_3_ = rg_acc_3_;
            rg_acc_3_ = (float)0;
            #pragma unroll 4
            for (int i = (0) + rg_h_; i < (m); i += 32) {
                rg_acc_0_ += A[(size_t)i * n + rg_j_0_] * x[i];
                rg_acc_1_ += A[(size_t)i * n + rg_j_1_] * x[i];
                rg_acc_2_ += A[(size_t)i * n + rg_j_2_] * x[i];
                rg_acc_3_ += A[(size_t)i * n + rg_j_3_] * x[i];
            }
            // Combine the row shares of each column (a shared-memory tree).
            rg_shares_acc_[rg_h_][0 + rg_w_] = rg_acc_0_;
            rg_shares_acc_[rg_h_][8 + rg_w_] = rg_acc_1_;
            rg_shares_acc_[rg_h_][16 + rg_w_] = rg_acc_2_;
            rg_shares_acc_[rg_h_][24 + rg_w_] = rg_acc_3_;
            __syncthreads();
            for (int rg_half_ = 16; rg_half_ > 0; rg_half_ >>= 1) {
                if (rg_h_ < rg_half_) {
                    { const float rg_a_ = rg_shares_acc_[rg_h_][0 + rg_w_], rg_b_ = rg_shares_acc_[rg_h_ + rg_half_][0 + rg_w_]; rg_shares_acc_[rg_h_][0 + rg_w_] = rg_a_ + rg_b_; }
                    { const float rg_a_ = rg_shares_acc_[rg_h_][8 + rg_w_], rg_b_ = rg_shares_acc_[rg_h_ + rg_half_][8 + rg_w_]; rg_shares_acc_[rg_h_][8 + rg_w_] = rg_a_ + rg_b_; }
                    { const float rg_a_ = rg_shares_acc_[rg_h_][16 + rg_w_], rg_b_ = rg_shares_acc_[rg_h_ + rg_half_][16 + rg_w_]; rg_shares_acc_[rg_h_][16 + rg_w_] = rg_a_ + rg_b_; }
                    { const float rg_a_ = rg_shares_acc_[rg_h_][24 + rg_w_], rg_b_ = rg_shares_acc_[rg_h_ + rg_half_][24 + rg_w_]; rg_shares_acc_[rg_h_][24 + rg_w_] = rg_a_ + rg_b_; }
                }
                __syncthreads();
            }
            rg_acc_0_ = rg_init_rg_acc_0_ + rg_shares_acc_[0][0 + rg_w_];
            rg_acc_1_ = rg_init_rg_acc_1_ + rg_shares_acc_[0][8 + rg_w_];
            rg_acc_2_ = rg_init_rg_acc_2_ + rg_shares_acc_[0][16 + rg_w_];
            rg_acc_3_ = rg_init_rg_acc_3_ + rg_shares_acc_[0][24 + rg_w_];
            __syncthreads();
        }
        if (rg_h_ == 0) {
            if (rg_column_ + 0 < rg_columns_) {
                y[rg_j_0_] = rg_acc_0_;
            }
            if (rg_column_ + 8 < rg_columns_) {
                y[rg_j_1_] = rg_acc_1_;
            }
            if (rg_column_ + 16 < rg_columns_) {
                y[rg_j_2_] = rg_acc_2_;
            }
            if (rg_column_ + 24 < rg_columns_) {
                y[rg_j_3_] = rg_acc_3_;
            }
        }
    }
}
