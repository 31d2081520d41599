// applier: GroupPerRow
// Index of each row's largest value (the first one on ties).
__global__ void argmax_rows(const float *scores, int *best, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float top = scores[r * cols];
    int at = 0;
    for (int c = 1; c < cols; c++) {
        float s = scores[r * cols + c];
        if (s > top) { top = s; at = c; }
    }
    best[r] = at;
}
