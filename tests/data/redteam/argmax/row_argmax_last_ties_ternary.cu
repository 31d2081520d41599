// Row argmax where the last of equal values wins (>=), long long row offsets.
// applier: GroupPerRow
__global__ void argmax_last(const int *v, int *idx, long long rows, long long cols)
{
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        int best = v[r * cols];
        int at = 0;
        for (int c = 1; c < cols; c++) {
            if (v[r * cols + c] >= best) {
                best = v[r * cols + c];
                at = c;
            }
        }
        idx[r] = at;
    }
}
