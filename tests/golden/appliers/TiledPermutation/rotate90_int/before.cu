// Rotate an int image 90 degrees clockwise: out is W x H, out[x][H - 1 - y] = in[y][x].
// applier: TiledPermutation
__global__ void rotate_cw(const int *img, int *rot, int H, int W)
{
    int col = threadIdx.x + blockIdx.x * blockDim.x;
    int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (row < H && col < W) {
        rot[col * H + (H - 1 - row)] = img[row * W + col];
    }
}
