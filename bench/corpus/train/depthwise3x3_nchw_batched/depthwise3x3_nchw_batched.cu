// Depthwise 3x3 convolution of a batch of CHW images (N*C planes, one per blockIdx.z), one
// 3x3 filter per channel, zero padding by skipping taps outside the plane.
#include <cuda_runtime.h>

__global__ void depthwise_nchw(const float *src, const float *taps, float *dst, int planes, int channels,
                               int height, int width)
{
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    int plane = blockIdx.z;
    if (ox >= width || oy >= height || plane >= planes)
        return;
    const int ch = plane % channels;
    float total = 0.0f;
    for (int ky = -1; ky <= 1; ++ky) {
        int sy = oy + ky;
        if (sy < 0 || sy >= height)
            continue;
        for (int kx = -1; kx <= 1; ++kx) {
            int sx = ox + kx;
            if (sx < 0 || sx >= width)
                continue;
            total += taps[ch * 9 + (ky + 1) * 3 + (kx + 1)] * src[(plane * height + sy) * width + sx];
        }
    }
    dst[(plane * height + oy) * width + ox] = total;
}
