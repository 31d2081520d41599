#include <cub/cub.cuh>
// applier: BlockReduceAtomic
// How many values exceed a threshold: a conditional atomic counter.
__global__ void count_above(const float *values, unsigned int *count, float threshold, int n)
{
    typedef cub::BlockReduce<unsigned int, 256> rg_block_reduce_;
    __shared__ typename rg_block_reduce_::TempStorage rg_temp_;
    // Coalesced grid-stride loop, 4 independent elements (loads in flight) per iteration.
    unsigned int rg_acc0_ = (unsigned int)0, rg_acc1_ = (unsigned int)0, rg_acc2_ = (unsigned int)0, rg_acc3_ = (unsigned int)0;
    const long long rg_stride_ = (long long)blockDim.x * gridDim.x;
    const long long rg_count_ = (long long)(n);
    long long rg_e_ = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; rg_e_ + 3 * rg_stride_ < rg_count_; rg_e_ += 4 * rg_stride_) {
        {
            const int i = (int)(rg_e_);
            if (values[i] > threshold) rg_acc0_ += (unsigned int)(1u);
        }
        {
            const int i = (int)(rg_e_ + 1 * rg_stride_);
            if (values[i] > threshold) rg_acc1_ += (unsigned int)(1u);
        }
        {
            const int i = (int)(rg_e_ + 2 * rg_stride_);
            if (values[i] > threshold) rg_acc2_ += (unsigned int)(1u);
        }
        {
            const int i = (int)(rg_e_ + 3 * rg_stride_);
            if (values[i] > threshold) rg_acc3_ += (unsigned int)(1u);
        }
    }
    for (; rg_e_ < rg_count_; rg_e_ += rg_stride_)
        {
            const int i = (int)(rg_e_);
            if (values[i] > threshold) rg_acc0_ += (unsigned int)(1u);
        }
    unsigned int rg_acc_ = rg_acc0_ + rg_acc1_ + rg_acc2_ + rg_acc3_;

    // The block's partial results combined by CUB; one atomic per block instead of one per element.
    const unsigned int rg_total_ = rg_block_reduce_(rg_temp_).Sum(rg_acc_);
    if (threadIdx.x == 0)
        atomicAdd(count, rg_total_);
}
