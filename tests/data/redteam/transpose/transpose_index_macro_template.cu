// A naive transpose the way library code writes it: a template over the element type, GNU
// `__restrict` pointers, the row-major offset through an index macro, a launch helper.
// applier: TiledPermutation
#include <cuda_runtime.h>

#define IDX2R(r, c, ld) ((r) * (ld) + (c))

template <typename T>
__global__ void transpose_naive(T *__restrict out, const T *__restrict in, int n_rows, int n_cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < n_rows && c < n_cols)
        out[IDX2R(c, r, n_rows)] = in[IDX2R(r, c, n_cols)];
}

template <typename T>
void launch_transpose(T *out, const T *in, int n_rows, int n_cols, cudaStream_t stream)
{
    const dim3 block(16, 16);
    const dim3 grid((n_cols + block.x - 1) / block.x, (n_rows + block.y - 1) / block.y);
    transpose_naive<T><<<grid, block, 0, stream>>>(out, in, n_rows, n_cols);
}

template void launch_transpose<float>(float *, const float *, int, int, cudaStream_t);
template __global__ void transpose_naive<float>(float *__restrict, const float *__restrict, int, int);
