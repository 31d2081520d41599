// Maximum of non-negative floats: int atomicMax on the float's bits, the value through a helper.
// applier: BlockReduceAtomic
__device__ __forceinline__ float magnitude(float x) { return fabsf(x); }

__global__ void max_abs(const float *x, int *max_bits, int n)
{
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < n) {
        float m = magnitude(x[gid]);
        atomicMax(max_bits, __float_as_int(m));
    }
}
