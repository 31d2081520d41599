// applier: ColumnSplitReduction
// y = alpha * A^T x + beta * y for a row-major A, as a template: one thread per output column,
// an unroll pragma and a `!=` loop test.
template <typename T>
__global__ void gemv_t_scaled(int rows, int cols, T alpha, const T *A, const T *x, T beta, T *y)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    T dot = T(0);
#pragma unroll 8
    for (int r = 0; r != rows; ++r)
        dot += A[(size_t)r * cols + col] * x[r];
    y[col] = alpha * dot + beta * y[col];
}

template __global__ void gemv_t_scaled<float>(int, int, float, const float *, const float *, float, float *);
