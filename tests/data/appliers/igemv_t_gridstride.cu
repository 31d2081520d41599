// applier: ColumnSplitReduction
// Integer y = A^T x over a row-major A with a grid-stride loop over the output columns and the
// running sum written as `s = s + ...`.
__global__ void igemv_t(const int *__restrict__ mat, const int *__restrict__ vec, int *__restrict__ res,
                        int height, int width)
{
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < width; j += gridDim.x * blockDim.x) {
        int s = 0;
        for (int i = 0; i < height; i = i + 1) {
            const int *row = mat + (size_t)i * width;
            s = s + row[j] * vec[i];
        }
        res[j] = s;
    }
}
