// applier: ParallelScan
// Inclusive long long scan written with do/while (n >= 1 assumed), <<<1,1>>>.
__global__ void running_total(const long long *v, long long *r, long long n)
{
    long long acc = 0;
    long long i = 0;
    do {
        acc = acc + v[i];
        r[i] = acc;
        i++;
    } while (i < n);
}
