// Four answers, chosen by the thread: the address depends on the index.
__global__ void first_per_class(const float *x, int *first, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.0f)
        atomicMin(&first[i % 4], i);
}
