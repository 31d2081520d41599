// applier: RegisterColumnStencil or HaloTiledStencil
// Same padding with `continue`, bias added, 3-D grid (x, y, channel) per image; ReLU at the end.
__global__ void dw_bias_relu(const float *in, const float *wt, const float *bias, float *out, int C, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.z;
    if (x >= W || y >= H || c >= C) return;
    float sum = bias[c];
    for (int dy = -1; dy <= 1; ++dy) {
        int yy = y + dy;
        if (yy < 0 || yy >= H) continue;
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = x + dx;
            if (xx < 0 || xx >= W) continue;
            sum += in[(c * H + yy) * W + xx] * wt[(c * 3 + dy + 1) * 3 + dx + 1];
        }
    }
    out[(c * H + y) * W + x] = fmaxf(sum, 0.0f);
}
