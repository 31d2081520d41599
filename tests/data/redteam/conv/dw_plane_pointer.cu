// applier: RegisterColumnStencil or HaloTiledStencil
// Local pointers to the channel plane and its filter (size_t offsets), same padding with ternaries.
__global__ void dw_plane(const float *in, const float *filters, float *out, int C, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.z;
    if (x < W && y < H) {
        const float *p = in + (size_t)c * H * W;
        const float *f = filters + c * 9;
        float v = 0.0f;
        for (int i = -1; i <= 1; i++)
            for (int j = -1; j <= 1; j++) {
                int yy = y + i, xx = x + j;
                v += (yy >= 0 && yy < H && xx >= 0 && xx < W) ? p[yy * W + xx] * f[(i + 1) * 3 + (j + 1)] : 0.0f;
            }
        out[(size_t)c * H * W + y * W + x] = v;
    }
}
