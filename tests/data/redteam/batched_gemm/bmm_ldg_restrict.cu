// applier: BatchedSmallMatmul
// __restrict__ pointers read through __ldg, one block per matrix with threadIdx.y/x as (row, col).
__global__ void bmm_ldg(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                        int nmat, int M, int N, int K)
{
    const int mat = blockIdx.x;
    const int r = threadIdx.y;
    const int c = threadIdx.x;
    if (mat < nmat && r < M && c < N) {
        float acc = 0.0f;
#pragma unroll 8
        for (int k = 0; k < K; ++k)
            acc += __ldg(&A[(mat * M + r) * K + k]) * __ldg(&B[(mat * K + k) * N + c]);
        C[(mat * M + r) * N + c] = acc;
    }
}
