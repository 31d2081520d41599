// applier: WarpTopK
// Top 4 of every row, largest first (earlier column on ties), one thread per row: insertion by a
// while loop that shifts smaller entries down.
#define K 4

__global__ void row_top4(const float *scores, float *best, int *where, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float v[K];
    int id[K];
    for (int q = 0; q < K; q++) {
        v[q] = -INFINITY;
        id[q] = -1;
    }
    for (int c = 0; c < cols; c++) {
        float e = scores[(long long)r * cols + c];
        if (e > v[K - 1]) {
            int q = K - 1;
            while (q > 0 && v[q - 1] < e) {
                v[q] = v[q - 1];
                id[q] = id[q - 1];
                q--;
            }
            v[q] = e;
            id[q] = c;
        }
    }
    for (int q = 0; q < K; q++) {
        best[r * K + q] = v[q];
        where[r * K + q] = id[q];
    }
}
