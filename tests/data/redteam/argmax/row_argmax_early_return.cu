// Index of each row's maximum (first of equal values), one thread per row, early return.
// applier: GroupPerRow
__global__ void row_argmax(const float *scores, int *best, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float *s = scores + r * cols;
    float bv = s[0];
    int bi = 0;
    for (int c = 1; c < cols; ++c) {
        if (s[c] > bv) {
            bv = s[c];
            bi = c;
        }
    }
    best[r] = bi;
}
