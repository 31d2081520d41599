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
    cg::thread_block cta = cg::this_thread_block();
    T *sdata = SharedMemory<T>();

    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    sdata[tid] = (i < n) ? g_idata[i] : 0;

    cg::sync(cta);

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0) {
            sdata[tid] += sdata[tid + s];
        }

        cg::sync(cta);
    }

    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

template __global__ void reduce0<double>(double *, double *, unsigned int);
