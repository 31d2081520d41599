// applier: BatchedSmallMatmul
// Fixed-size template (16x16), 1-D grid over all outputs, unsigned index.
template <int S>
__global__ void bmm_fixed(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                          unsigned int nmat)
{
    unsigned int id = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int mat = id / (S * S);
    unsigned int r = (id % (S * S)) / S;
    unsigned int c = id % S;
    if (mat < nmat) {
        float v = 0.f;
#pragma unroll
        for (int k = 0; k < S; ++k)
            v += A[mat * S * S + r * S + k] * B[mat * S * S + k * S + c];
        C[mat * S * S + r * S + c] = v;
    }
}

template __global__ void bmm_fixed<16>(const float *, const float *, float *, unsigned int);
