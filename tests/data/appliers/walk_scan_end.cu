// applier: ParallelScan
// Exclusive int scan with two local pointers walked to the end of the input; <<<1, 1>>> launch.
__global__ void exclusive_walk(const int *data, int *result, int count)
{
    const int *p = data;
    int *q = result;
    int s = 0;
    for (; p != data + count; ++p, ++q) {
        *q = s;
        s += *p;
    }
}
