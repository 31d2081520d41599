// applier: CsrGroupPerRow
// CSR y = A x with pointers walked along the row's values and column indices.
__global__ void spmv_walk(const int *offsets, const int *columns, const float *values, const float *x, float *y,
                          int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n)
        return;
    const int first = offsets[r];
    const float *v = values + first;
    const int *c = columns + first;
    float sum = 0.0f;
    for (int k = first; k < offsets[r + 1]; ++k) {
        sum += *v * x[*c];
        ++v;
        ++c;
    }
    y[r] = sum;
}
