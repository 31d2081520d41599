// CSR SpMV in double: early return, while loop over the nonzeros, different names.
// applier: CsrGroupPerRow
__global__ void csr_mv(const int *offsets, const int *indices, const double *data, const double *v, double *res, int m)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m)
        return;
    double acc = 0.0;
    int k = offsets[r];
    while (k < offsets[r + 1]) {
        acc += data[k] * v[indices[k]];
        ++k;
    }
    res[r] = acc;
}
