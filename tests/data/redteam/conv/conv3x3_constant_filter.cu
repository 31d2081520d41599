// applier: RegisterColumnStencil or HaloTiledStencil
// Single-channel 3x3 convolution with the filter in __constant__ memory, same padding.
__constant__ float c_filter[9];

__global__ void conv3x3_const(const float *img, float *res, int width, int height)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px < width && py < height) {
        float v = 0.0f;
        for (int fy = 0; fy < 3; ++fy)
            for (int fx = 0; fx < 3; ++fx) {
                int sx = px + fx - 1, sy = py + fy - 1;
                if (sx >= 0 && sx < width && sy >= 0 && sy < height)
                    v += c_filter[fy * 3 + fx] * img[sy * width + sx];
            }
        res[py * width + px] = v;
    }
}
