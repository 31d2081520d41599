// Row softmax with pointer arithmetic and while loops, the sum pass storing exponentials first.
// applier: GroupPerRow
__global__ void softmax_inplace_out(const float *src, float *dst, int n, int d)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n) {
        const float *s = src + row * d;
        float *o = dst + row * d;
        float mx = s[0];
        int j = 1;
        while (j < d) { mx = fmaxf(mx, s[j]); ++j; }
        float total = 0.0f;
        j = 0;
        while (j < d) { total += __expf(s[j] - mx); ++j; }
        float inv = 1.0f / total;
        for (j = 0; j < d; ++j) o[j] = __expf(s[j] - mx) * inv;
    }
}
