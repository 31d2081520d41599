// y = A x with fmaf, __ldg and an unrolled column loop (row-major, one thread per row).
// applier: GroupPerRow
__global__ void gemv_fma(const float *A, const float *x, float *y, int M, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    float acc = 0.f;
#pragma unroll 8
    for (int j = 0; j < N; ++j)
        acc = fmaf(__ldg(A + (size_t)i * N + j), __ldg(x + j), acc);
    y[i] = acc;
}
