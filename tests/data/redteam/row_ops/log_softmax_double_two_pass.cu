// Log-softmax of double rows: max pass, log-sum-exp pass, write pass; early return.
// applier: GroupPerRow
__global__ void log_softmax_f64(const double *x, double *y, int rows, int cols)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const double *in = x + (long long)row * cols;
    double *out = y + (long long)row * cols;
    double mx = -1e300;
    for (int c = 0; c < cols; c++)
        if (in[c] > mx) mx = in[c];
    double sum = 0.0;
    for (int c = 0; c < cols; c++)
        sum += exp(in[c] - mx);
    const double lse = mx + log(sum);
    for (int c = 0; c < cols; c++)
        out[c] = in[c] - lse;
}
