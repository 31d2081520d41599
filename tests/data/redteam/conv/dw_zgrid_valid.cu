// applier: RegisterColumnStencil or HaloTiledStencil
// Depthwise 3x3 "valid" (output H-2 x W-2): blockIdx.z walks (image, channel) planes.
__global__ void dwconv_valid(const float *input, const float *filt, float *output, int C, int H, int W)
{
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    int plane = blockIdx.z;          // n * C + c
    int c = plane % C;
    int OH = H - 2, OW = W - 2;
    if (ox < OW && oy < OH) {
        float s = 0.f;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                s += input[(plane * H + oy + i) * W + ox + j] * filt[c * 9 + i * 3 + j];
        output[(plane * OH + oy) * OW + ox] = s;
    }
}
