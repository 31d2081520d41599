#include <cub/cub.cuh>
// Per-block partial sums the way the vendor samples spell them: cooperative groups for the
// barrier and the thread's rank, and a `SharedMemory<T>` proxy whose conversion operator hands
// out the dynamically sized shared buffer (an `extern __shared__` array of one type per file).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

template <class T>
struct SharedMemory {
    __device__ inline operator T *()
    {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }

    __device__ inline operator const T *() const
    {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};

template <class T>
__global__ void reduce0(T *g_idata, T *g_odata, unsigned int n)
{
    typedef cub::BlockReduce<T, 128> rg_block_reduce_;
    __shared__ typename rg_block_reduce_::TempStorage rg_temp_;
    T rg_value_ = (T)0;
    // 2 of the original 256 threads' values each: t, t + 128, ...
    #pragma unroll
    for (unsigned int rg_item_ = 0; rg_item_ < 2u; ++rg_item_) {
        const unsigned int rg_thread_ = threadIdx.x + rg_item_ * 128u;
        {
            unsigned int tid = rg_thread_;
            unsigned int i = blockIdx.x * 256u + rg_thread_;
            rg_value_ += (T)((i < n) ? g_idata[i] : 0);
        }
    }
    // The block's values combined by CUB (warp shuffles) instead of the shared-memory tree.
    const T rg_total_ = rg_block_reduce_(rg_temp_).Sum(rg_value_);
    if (threadIdx.x == 0)
        g_odata[blockIdx.x] = rg_total_;
}

template __global__ void reduce0<double>(double *, double *, unsigned int);
