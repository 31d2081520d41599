// Row sums of squares with __ldg loads and the column loop unrolled by a pragma.
// applier: GroupPerRow
__global__ void row_sumsq(const float *__restrict__ a, float *__restrict__ out, int m, int n)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float acc = 0.0f;
#pragma unroll 4
        for (int j = 0; j < n; j++) {
            const float v = __ldg(&a[row * n + j]);
            acc = fmaf(v, v, acc);
        }
        out[row] = acc;
    }
}
