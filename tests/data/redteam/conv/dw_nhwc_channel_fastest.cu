// applier: RegisterColumnStencil or HaloTiledStencil
// Depthwise 3x3 on an HWC (NHWC, one image) tensor: channel fastest on x, column on y, row on z;
// filter laid out [ky][kx][c] (TensorFlow's order), same padding.
__global__ void dw_nhwc(const float *in, const float *filter, float *out, int H, int W, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int x = blockIdx.y * blockDim.y + threadIdx.y;
    int y = blockIdx.z;
    if (c >= C || x >= W || y >= H) return;
    float acc = 0.f;
    for (int ky = 0; ky < 3; ky++) {
        int iy = y + ky - 1;
        for (int kx = 0; kx < 3; kx++) {
            int ix = x + kx - 1;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                acc += in[(iy * W + ix) * C + c] * filter[(ky * 3 + kx) * C + c];
        }
    }
    out[(y * W + x) * C + c] = acc;
}
