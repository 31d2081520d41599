// Global argmax by one thread (the first of equal values), int data.
// applier: BlockReduceAtomic
__global__ void argmax_serial(const int *data, int *where, int n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int bi = 0;
        int bv = data[0];
        for (int i = 1; i < n; i++)
            if (data[i] > bv) { bv = data[i]; bi = i; }
        *where = bi;
    }
}
