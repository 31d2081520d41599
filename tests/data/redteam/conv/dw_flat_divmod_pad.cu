// applier: RegisterColumnStencil or HaloTiledStencil
// Depthwise 3x3, NCHW, "same" zero padding; 1-D grid over N*C*H*W recovered with / and %.
__global__ void depthwise_conv(const float *in, const float *w, float *out, int N, int C, int H, int W)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N * C * H * W) return;
    int x = idx % W;
    int y = (idx / W) % H;
    int c = (idx / (W * H)) % C;
    int n = idx / (W * H * C);
    float acc = 0.0f;
    for (int ky = 0; ky < 3; ky++) {
        for (int kx = 0; kx < 3; kx++) {
            int iy = y + ky - 1;
            int ix = x + kx - 1;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                acc += in[((n * C + c) * H + iy) * W + ix] * w[c * 9 + ky * 3 + kx];
        }
    }
    out[idx] = acc;
}
