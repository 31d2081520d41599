// The last negative element: atomicMax (the search would run from the end).
__global__ void last_negative(const float *x, int *last, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.0f)
        atomicMax(last, i);
}
