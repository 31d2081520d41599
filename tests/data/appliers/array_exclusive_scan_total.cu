// applier: ParallelScan
// Exclusive scan of int sizes plus the grand total, launched on one thread.
__global__ void offsets_and_total(const int *sizes, int *offsets, int *total, int count)
{
    int running = 0;
    for (int i = 0; i < count; i++) {
        offsets[i] = running;
        running += sizes[i];
    }
    *total = running;
}
