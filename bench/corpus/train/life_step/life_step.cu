// One generation of Conway's Game of Life on a byte grid; cells outside the grid are dead.
#include <cuda_runtime.h>

__global__ void life_step(const unsigned char *cur, unsigned char *next, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    int alive = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            if (dx == 0 && dy == 0)
                continue;
            int xx = x + dx, yy = y + dy;
            if (xx >= 0 && xx < width && yy >= 0 && yy < height)
                alive += cur[yy * width + xx];
        }
    unsigned char me = cur[y * width + x];
    next[y * width + x] = (alive == 3 || (me && alive == 2)) ? 1 : 0;
}
