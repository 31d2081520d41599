// An image pipeline: RGB planes -> gray -> 3x3 box blur -> levels (a struct passed by value) ->
// transpose -> threshold mask. Five kernels launched with <<<>>> on one 4096 x 4096 frame; prints
// the mask's pixel count.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t status_ = (call);                                                    \
        if (status_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            std::exit(2);                                                                \
        }                                                                                \
    } while (0)

__global__ void to_gray(const unsigned char *r, const unsigned char *g, const unsigned char *b, float *gray, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        gray[i] = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i];
    }
}

__global__ void blur3x3(const float *src, float *dst, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    float sum = 0.0f;
    int count = 0;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int xx = x + dx, yy = y + dy;
            if (xx >= 0 && xx < width && yy >= 0 && yy < height) {
                sum += src[yy * width + xx];
                count++;
            }
        }
    }
    dst[y * width + x] = sum / count;
}

struct Levels {
    float black;  // subtracted first
    float gain;   // then multiplied
};

__global__ void levels(float *image, int n, Levels adjust)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        image[i] = (image[i] - adjust.black) * adjust.gain;
    }
}

// Rotates the frame for the column pass: one thread per pixel, reads along rows, writes along columns.
__global__ void transpose_image(float *out, float *in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        out[x * rows + y] = in[y * cols + x];
    }
}

__global__ void threshold(const float *image, unsigned char *mask, int n, float level)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        mask[i] = image[i] > level ? 255 : 0;
    }
}

int main(int argc, char **argv)
{
    const int width = argc > 1 ? std::atoi(argv[1]) : 4096;
    const int height = argc > 2 ? std::atoi(argv[2]) : 4096;
    const int n = width * height;
    std::vector<unsigned char> planes(3 * static_cast<size_t>(n));
    unsigned state = 12345u;
    for (auto &value : planes) {
        state = state * 1664525u + 1013904223u;
        value = static_cast<unsigned char>(state >> 24);
    }
    unsigned char *r, *g, *b, *mask;
    float *gray, *blurred, *rotated;
    CHECK(cudaMalloc(&r, n));
    CHECK(cudaMalloc(&g, n));
    CHECK(cudaMalloc(&b, n));
    CHECK(cudaMalloc(&mask, n));
    CHECK(cudaMalloc(&gray, n * sizeof(float)));
    CHECK(cudaMalloc(&blurred, n * sizeof(float)));
    CHECK(cudaMalloc(&rotated, n * sizeof(float)));
    CHECK(cudaMemcpy(r, planes.data(), n, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(g, planes.data() + n, n, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, planes.data() + 2 * static_cast<size_t>(n), n, cudaMemcpyHostToDevice));

    to_gray<<<(n + 255) / 256, 256>>>(r, g, b, gray, n);
    blur3x3<<<dim3((width + 15) / 16, (height + 15) / 16), dim3(16, 16)>>>(gray, blurred, width, height);
    levels<<<(n + 255) / 256, 256>>>(blurred, n, Levels{8.0f, 1.25f});
    transpose_image<<<dim3((width + 31) / 32, (height + 31) / 32), dim3(32, 32)>>>(rotated, blurred, height, width);
    threshold<<<(n + 255) / 256, 256>>>(rotated, mask, n, 127.5f);
    CHECK(cudaGetLastError());

    std::vector<unsigned char> result(n);
    CHECK(cudaMemcpy(result.data(), mask, n, cudaMemcpyDeviceToHost));
    long set = 0;
    for (unsigned char m : result) {
        set += m != 0;
    }
    std::printf("image_pipeline %dx%d: %ld of %d pixels above the level\n", width, height, set, n);
    return 0;
}
