// applier: BatchedSmallMatmul
// One thread per output element of all matrices: flat id split with / and %, square n x n.
__global__ void bmm_flat(const float *a, const float *b, float *c, int batch, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= batch * n * n) return;
    int m = t / (n * n);
    int r = (t / n) % n;
    int q = t % n;
    const int off = m * n * n;
    float acc = 0;
    for (int i = 0; i < n; ++i)
        acc += a[off + r * n + i] * b[off + i * n + q];
    c[off + r * n + q] = acc;
}
