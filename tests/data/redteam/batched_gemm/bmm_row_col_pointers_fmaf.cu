// applier: BatchedSmallMatmul
// A row pointer and a column pointer per thread, `#pragma unroll 4` and fmaf; flat id, unsigned.
__global__ void bmm_rowptr(const float *A, const float *B, float *C, unsigned batch, unsigned M, unsigned N, unsigned K)
{
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned per = M * N;
    unsigned b = gid / per;
    unsigned rem = gid % per;
    unsigned i = rem / N, j = rem % N;
    if (b >= batch) return;
    const float *a_row = A + b * M * K + i * K;
    const float *b_col = B + b * K * N + j;
    float acc = 0.0f;
#pragma unroll 4
    for (unsigned k = 0; k < K; ++k)
        acc = fmaf(a_row[k], b_col[k * N], acc);
    C[gid] = acc;
}
