// Depthwise 3x3 convolution of an HWC image (channels fastest), weights [3][3][C], zero padding.
#include <cuda_runtime.h>

__global__ void depthwise3x3_nhwc(const float *x, const float *k, float *y, int H, int W, int C)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= H * W * C)
        return;
    int c = idx % C;
    int col = (idx / C) % W;
    int row = idx / (C * W);
    float acc = 0.0f;
    for (int dy = 0; dy < 3; ++dy) {
        int r = row + dy - 1;
        for (int dx = 0; dx < 3; ++dx) {
            int q = col + dx - 1;
            if (r >= 0 && r < H && q >= 0 && q < W)
                acc += x[(r * W + q) * C + c] * k[(dy * 3 + dx) * C + c];
        }
    }
    y[idx] = acc;
}
