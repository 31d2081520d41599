// Minimum of a trailing window of 5: not a prefix.
__global__ void window_min(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float m = x[i];
        for (int j = (i >= 4 ? i - 4 : 0); j <= i; ++j)
            m = fminf(m, x[j]);
        out[i] = m;
    }
}
