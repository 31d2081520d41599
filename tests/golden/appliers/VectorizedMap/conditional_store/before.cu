// Clips negative values in place: the store happens only for some points, so a vector store
// of four points would write lanes that must keep their old value.
#include <cuda_runtime.h>

__global__ void clip_negative(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.0f)
        x[i] = 0.0f;
}
