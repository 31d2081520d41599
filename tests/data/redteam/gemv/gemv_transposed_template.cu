// Transposed GEMV y = alpha * A^T x for row-major A (rows x cols), template, unsigned indices.
// applier: ColumnSplitReduction
template <typename T>
__global__ void gemv_t(const T *A, const T *x, T *y, unsigned rows, unsigned cols, T alpha)
{
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cols)
        return;
    T acc = 0;
    for (unsigned i = 0; i < rows; i++)
        acc += x[i] * A[i * cols + j];
    y[j] = alpha * acc;
}

// instantiated here: host code would do it with its launch
template __global__ void gemv_t<double>(const double *, const double *, double *, unsigned, unsigned, double);
