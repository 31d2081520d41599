// Whole-array sum by one thread in a do/while loop counting down.
// applier: BlockReduceAtomic
__global__ void serial_sum(const double *a, double *s, int len)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    double total = 0.0;
    int i = len;
    do {
        --i;
        total += a[i];
    } while (i > 0);
    *s = total;
}
