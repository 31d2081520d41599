// Also marks every hit: another write besides the atomic.
__global__ void first_and_marks(const float *x, int *first, unsigned char *marks, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.0f) {
        marks[i] = 1;
        atomicMin(first, i);
    }
}
