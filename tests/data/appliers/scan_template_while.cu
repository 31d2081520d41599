// applier: ParallelScan
// A template running sum with a while loop, instantiated for unsigned int; one thread of the grid.
template <typename T>
__global__ void running_sum(const T *src, T *dst, int n)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    T total = 0;
    int i = 0;
    while (i < n) {
        total += src[i];
        dst[i] = total;
        ++i;
    }
}

template __global__ void running_sum<unsigned int>(const unsigned int *, unsigned int *, int);
