// applier: RegisterColumnStencil or HaloTiledStencil
// Rows padded to a pitch (elements) passed separately from the width, as with cudaMallocPitch.
__global__ void jacobi_pitched(const float *in, float *out, int width, int height, int pitch)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < width - 1 && y < height - 1)
        out[y * pitch + x] = 0.25f * (in[y * pitch + x - 1] + in[y * pitch + x + 1] + in[(y - 1) * pitch + x] + in[(y + 1) * pitch + x]);
}
