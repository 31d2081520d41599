// A decaying maximum: the update reads the accumulator outside the max (not associative).
__global__ void decayed_max(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float m = 0.0f;
        for (int j = 0; j <= i; ++j)
            m = fmaxf(0.9f * m, x[j]);
        out[i] = m;
    }
}
