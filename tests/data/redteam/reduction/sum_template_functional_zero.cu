// Templated per-thread sum from T(0) over a grid-stride loop, then one atomicAdd.
// applier: BlockReduceAtomic
template <typename T>
__global__ void reduce_sum(const T *src, T *dst, int n)
{
    T s = T(0);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        s += src[i];
    atomicAdd(dst, s);
}

// instantiated here: host code would do it with its launch
template __global__ void reduce_sum<float>(const float *, float *, int);
