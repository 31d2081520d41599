// Intensity histogram of an 8-bit image with a 2-D launch (256 bins).
// applier: PrivatisedHistogram
__global__ void image_hist(const unsigned char *img, unsigned int *hist, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        atomicAdd(&hist[img[y * width + x]], 1u);
}
