// Transpose of a double matrix, 2-D launch, size_t offsets, early return.
// applier: TiledPermutation
__global__ void transpose_f64(const double *src, double *dst, int height, int width)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    dst[(size_t)x * height + y] = src[(size_t)y * width + x];
}
