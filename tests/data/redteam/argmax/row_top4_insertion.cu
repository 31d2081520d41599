// Top-4 of each row (values and columns, descending, earliest column first among ties).
// applier: WarpTopK
#define K 4

__global__ void row_top4(const float *x, float *vals, int *cols_out, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float v[K];
        int c[K];
        for (int k = 0; k < K; ++k) { v[k] = -3.0e38f; c[k] = -1; }
        for (int j = 0; j < cols; ++j) {
            float e = x[r * cols + j];
            if (e > v[K - 1]) {
                int p = K - 1;
                while (p > 0 && v[p - 1] < e) {
                    v[p] = v[p - 1];
                    c[p] = c[p - 1];
                    --p;
                }
                v[p] = e;
                c[p] = j;
            }
        }
        for (int k = 0; k < K; ++k) {
            vals[r * K + k] = v[k];
            cols_out[r * K + k] = c[k];
        }
    }
}
