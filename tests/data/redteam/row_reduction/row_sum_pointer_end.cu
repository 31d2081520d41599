// Row sums: one thread per row walks a pointer from the row's start to its end.
// applier: GroupPerRow
__global__ void row_sums(const float *mat, float *sums, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *p = mat + (size_t)r * cols;
        float s = 0.f;
        for (int j = 0; j < cols; ++j)
            s += *p++;
        sums[r] = s;
    }
}
