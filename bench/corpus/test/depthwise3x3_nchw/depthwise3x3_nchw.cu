// Depthwise 3x3 convolution of an NCHW tensor, zero padding, stride 1: one thread per output.
#include <cuda_runtime.h>

__global__ void depthwise_conv3x3(const float *input, const float *filt, float *output,
                                  int N, int C, int H, int W)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N * C * H * W)
        return;
    int w = idx % W;
    int h = (idx / W) % H;
    int c = (idx / (W * H)) % C;
    int n = idx / (W * H * C);
    const float *plane = input + (size_t)(n * C + c) * H * W;
    const float *k = filt + c * 9;
    float acc = 0.f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int yy = h + dy, xx = w + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                acc += plane[yy * W + xx] * k[(dy + 1) * 3 + dx + 1];
        }
    output[idx] = acc;
}
