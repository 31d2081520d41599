// Column sums, one thread per column, long long indices.
// applier: ColumnSplitReduction
__global__ void column_sums(const float *A, float *colsum, long long rows, long long cols)
{
    long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 0.0f;
        for (long long r = 0; r < rows; ++r)
            s += A[r * cols + c];
        colsum[c] = s;
    }
}
