// Row means with the row along y of the launch (block 1 x 128), a while loop over the columns.
// applier: GroupPerRow
__global__ void row_mean(const float *x, float *mean, int height, int width)
{
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y >= height)
        return;
    float acc = 0.0f;
    int k = 0;
    while (k < width) {
        acc = acc + x[y * width + k];
        k++;
    }
    mean[y] = acc / width;
}
