// Column-major GEMV y = A x (A is m x n with leading dimension lda), one thread per output row.
// applier: ColumnSplitReduction
#define COLMAJ(i, j, ld) ((i) + (size_t)(j) * (ld))

__global__ void gemv_cm(const float *A, const float *x, float *y, int m, int n, int lda)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float t = 0.f;
        for (int col = 0; col < n; col++)
            t += A[COLMAJ(row, col, lda)] * x[col];
        y[row] = t;
    }
}
