#include <cub/cub.cuh>
// applier: CsrGroupPerRow
// y = A x for a CSR matrix, one thread per row.
__global__ void spmv_csr(const int *row_ptr, const int *col_idx, const float *vals, const float *x,
                         float *y, int rows)
{
    // 8 lanes per item (256-thread blocks): lanes stride over the item's elements (coalesced), CUB combines the lanes' partial results.
    typedef cub::WarpReduce<float, 8> rg_warp_reduce_float_;
    __shared__ typename rg_warp_reduce_float_::TempStorage rg_warp_reduce_float_temp[32];
    const int rg_lane_ = (threadIdx.x & 7);
    for (long long rg_item_ = (long long)blockIdx.x * 32 + threadIdx.x / 8; rg_item_ < (long long)(rows); rg_item_ += (long long)gridDim.x * 32) {
        const int row = (int)rg_item_;
        float sum = 0.0f;
        {
            const float rg_init_sum_ = sum;
            sum = (float)0;
            #pragma unroll 4
            for (int k = (row_ptr[row]) + rg_lane_; k < (row_ptr[row + 1]); k += 8) {
                sum += __ldg(&vals[k]) * __ldg(&x[__ldg(&col_idx[k])]);
            }
            {
                const float rg_total_ = rg_warp_reduce_float_(rg_warp_reduce_float_temp[threadIdx.x / 8]).Sum(sum);
                sum = rg_init_sum_ + __shfl_sync((0xffu << ((threadIdx.x & 31) & ~7u)), rg_total_, 0, 8);
                __syncwarp((0xffu << ((threadIdx.x & 31) & ~7u)));
            }
        }
        if (rg_lane_ == 0) {
            y[row] = sum;
        }
    }
}
