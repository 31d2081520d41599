// applier: ParallelScan
// Every thread adds up the elements before and at its own position (an O(n^2) inclusive scan).
__global__ void running_total(const int *deltas, int *totals, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int sum = 0;
        for (int j = 0; j <= i; ++j)
            sum += deltas[j];
        totals[i] = sum;
    }
}
