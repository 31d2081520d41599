// y = alpha * A x + beta * y for CSR A with unsigned row pointers, grid-stride over rows.
// applier: CsrGroupPerRow
__global__ void csr_gemv(unsigned nrows, const unsigned *rp, const unsigned *ci, const float *av, const float *x,
                         float *y, float alpha, float beta)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += blockDim.x * gridDim.x) {
        float s = 0.f;
        for (unsigned p = rp[i]; p < rp[i + 1]; ++p)
            s += av[p] * x[ci[p]];
        y[i] = alpha * s + beta * y[i];
    }
}
