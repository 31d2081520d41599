// y = x * x + c with block-local pointers (x + blockIdx.x * blockDim.x) and threadIdx.x inside.
// applier: VectorizedMap
__global__ void square_plus(const float *x, float *y, float c, int n)
{
    const float *xb = x + blockIdx.x * blockDim.x;
    float *yb = y + blockIdx.x * blockDim.x;
    int t = threadIdx.x;
    if (blockIdx.x * blockDim.x + t < n)
        yb[t] = xb[t] * xb[t] + c;
}
