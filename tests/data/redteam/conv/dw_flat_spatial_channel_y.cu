// applier: RegisterColumnStencil or HaloTiledStencil
// Spatial positions flattened along x (p -> y, x by / and %), channel on blockIdx.y; same padding.
__global__ void dw_cy(const float *in, const float *k, float *out, int C, int H, int W)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y;
    if (p >= H * W || c >= C) return;
    int y = p / W, x = p % W;
    float s = 0.0f;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int yy = y + i - 1, xx = x + j - 1;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                s += in[(c * H + yy) * W + xx] * k[c * 9 + i * 3 + j];
        }
    out[(c * H + y) * W + x] = s;
}
