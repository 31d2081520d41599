// The predicate reads the answer so far.
__global__ void first_below_answer(const int *x, int *first, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < *first)
        atomicMin(first, i);
}
