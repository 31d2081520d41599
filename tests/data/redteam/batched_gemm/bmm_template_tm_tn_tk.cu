// applier: BatchedSmallMatmul
// Compile-time non-square sizes as three template parameters, a 1-D block of TM*TN threads per matrix.
template <int TM, int TN, int TK>
__global__ void bmm_fixed_mnk(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int count)
{
    const int m = blockIdx.x;
    const int r = threadIdx.x / TN;
    const int c = threadIdx.x % TN;
    if (m >= count) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < TK; ++k)
        acc = fmaf(A[m * TM * TK + r * TK + k], B[m * TK * TN + k * TN + c], acc);
    C[m * TM * TN + r * TN + c] = acc;
}

template __global__ void bmm_fixed_mnk<8, 4, 5>(const float *, const float *, float *, int);
