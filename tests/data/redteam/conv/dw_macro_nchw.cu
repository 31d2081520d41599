// applier: RegisterColumnStencil or HaloTiledStencil
// NCHW indexing macro, batch loop inside the thread, valid padding.
#define NCHW(n, c, h, w) ((((n) * C + (c)) * H + (h)) * W + (w))

__global__ void depthwise_batch(const float *src, const float *ker, float *dst, int N, int C, int H, int W)
{
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    int h = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.z;
    if (w >= W - 2 || h >= H - 2) return;
    for (int n = 0; n < N; n++) {
        float a = 0.0f;
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++)
                a += src[NCHW(n, c, h + r, w + s)] * ker[c * 9 + r * 3 + s];
        dst[((n * C + c) * (H - 2) + h) * (W - 2) + w] = a;
    }
}
