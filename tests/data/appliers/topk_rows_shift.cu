// applier: WarpTopK
// Top 3 doubles per row with their columns: find the slot, then shift the smaller entries down.
__global__ void top3_shift(const double *in, double *top, long long *pos, int n_rows, int n)
{
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row < n_rows) {
        const double *line = in + (long long)row * n;
        double best[3];
        long long at[3];
        for (int q = 0; q < 3; ++q) {
            best[q] = -1e300;
            at[q] = -1;
        }
        for (int j = 0; j < n; ++j) {
            double val = line[j];
            int p = 3;
            while (p > 0 && best[p - 1] < val)
                p--;
            if (p < 3) {
                for (int q = 2; q > p; --q) {
                    best[q] = best[q - 1];
                    at[q] = at[q - 1];
                }
                best[p] = val;
                at[p] = j;
            }
        }
        for (int q = 0; q < 3; ++q) {
            top[row * 3 + q] = best[q];
            pos[row * 3 + q] = at[q];
        }
    }
}
