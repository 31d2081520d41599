#include <cub/cub.cuh>
// Sum of each row of a rows x cols matrix: one thread walks a whole row.
#include <cuda_runtime.h>

__global__ void row_sum(const float *m, float *sums, int rows, int cols)
{
    // one 256-thread block per item: lanes stride over the item's elements (coalesced), CUB combines the lanes' partial results.
    typedef cub::BlockReduce<float, 256> rg_block_reduce_float_;
    __shared__ typename rg_block_reduce_float_::TempStorage rg_block_reduce_float_temp;
    __shared__ float rg_block_reduce_float_result;
    const int rg_lane_ = threadIdx.x;
    for (long long rg_item_ = (long long)blockIdx.x; rg_item_ < (long long)(rows); rg_item_ += (long long)gridDim.x) {
        const int row = (int)rg_item_;
        float s = 0.0f;
        {
            const float rg_init_s_ = s;
            s = (float)0;
            #pragma unroll 4
            for (int j = (0) + rg_lane_; j < (cols); j += 256) {
                s += m[row * cols + j];
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
            sums[row] = s;
        }
    }
}

void launch_row_sum(const float *m, float *sums, int rows, int cols)
{
    row_sum<<<(rows + 255) / 256, 256>>>(m, sums, rows, cols);
}
