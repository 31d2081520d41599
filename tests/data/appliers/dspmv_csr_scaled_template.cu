// applier: CsrGroupPerRow
// y = alpha * A x + beta * y for a CSR matrix, a template instantiated for double.
template <typename V>
__global__ void spmv_scaled(const V alpha, const V beta, const int *__restrict__ ptr, const int *__restrict__ idx,
                            const V *__restrict__ val, const V *__restrict__ x, V *__restrict__ y, const int nrows)
{
    const int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row < nrows) {
        V dot = static_cast<V>(0);
        for (int k = ptr[row]; k < ptr[row + 1]; k++)
            dot += val[k] * x[idx[k]];
        y[row] = alpha * dot + beta * y[row];
    }
}

template __global__ void spmv_scaled<double>(const double, const double, const int *, const int *, const double *,
                                             const double *, double *, const int);
