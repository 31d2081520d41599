// applier: BlockReduceAtomic
// Sum of squares, one atomic per element behind an early-return guard.
__global__ void sum_squares(const float *in, float *out, int n)
{
    const int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx >= n) return;
    const float v = in[idx];
    atomicAdd(&out[0], v * v);
}
