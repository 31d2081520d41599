#include <cub/cub.cuh>
// applier: ParallelScan
// Inclusive prefix sum of every row, one thread per row.
__global__ __launch_bounds__(128) void row_cumsum(const float *x, float *y, int rows, int cols)
{
    // one warp per item (128-thread blocks): lanes stride over the item's elements (coalesced), CUB combines the lanes' partial results.
    typedef cub::WarpScan<float, 32> rg_warp_scan_float_;
    __shared__ typename rg_warp_scan_float_::TempStorage rg_warp_scan_float_temp[4];
    const int rg_lane_ = (threadIdx.x & 31);
    for (long long rg_item_ = (long long)blockIdx.x * 4 + threadIdx.x / 32; rg_item_ < (long long)(rows); rg_item_ += (long long)gridDim.x * 4) {
        const int r = (int)rg_item_;
        float run = 0.0f;
        {
            float rg_carry_ = run;
            for (int rg_tile_ = (0); rg_tile_ < (cols); rg_tile_ += 32) {
                const int c = rg_tile_ + rg_lane_;
                float rg_value_ = (float)0;
                if (c < (cols)) {

                    rg_value_ = (x[r * cols + c]);
                }
                float rg_scanned_, rg_tile_total_;
                rg_warp_scan_float_(rg_warp_scan_float_temp[threadIdx.x / 32]).InclusiveSum(rg_value_, rg_scanned_, rg_tile_total_);
                if (c < (cols)) {
                    run = rg_carry_ + rg_scanned_ - rg_value_;
                    run = rg_carry_ + rg_scanned_;
                    y[r * cols + c] = run;
                }
                rg_carry_ += rg_tile_total_;
                __syncwarp(0xffffffffu);
            }
            run = rg_carry_;
        }
    }
}
