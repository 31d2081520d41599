// The smallest odd value: the atomic keeps a value, not the index (no early exit applies).
__global__ void smallest_odd(const int *x, int *best, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && (x[i] & 1))
        atomicMin(best, x[i]);
}
