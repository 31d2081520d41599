// 5x5 convolution (cross-correlation) of a single-channel float image with a filter from
// memory; pixels outside the image read as zero; 2-D launch, one thread per output pixel.
#include <cuda_runtime.h>

#define KS 5
#define HALF (KS / 2)

__global__ void conv5x5(const float *image, const float *filter, float *result, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        float sum = 0.0f;
        for (int i = 0; i < KS; i++) {
            for (int j = 0; j < KS; j++) {
                int rr = r + i - HALF;
                int cc = c + j - HALF;
                float pixel = (rr >= 0 && rr < rows && cc >= 0 && cc < cols) ? image[rr * cols + cc] : 0.0f;
                sum += pixel * filter[i * KS + j];
            }
        }
        result[r * cols + c] = sum;
    }
}
