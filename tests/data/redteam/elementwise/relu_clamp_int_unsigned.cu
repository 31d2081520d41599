// Clamp ints to [0, cap] in place, unsigned index, early return, a helper.
// applier: VectorizedMap
__device__ inline int clamp_to(int v, int cap) { return v < 0 ? 0 : (v > cap ? cap : v); }

__global__ void clamp_inplace(int *data, int cap, unsigned count)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    data[i] = clamp_to(data[i], cap);
}
