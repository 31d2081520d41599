// applier: RegisterColumnStencil or HaloTiledStencil
// Templated on the type and kernel size (instantiated double, 3), valid padding, 2-D grid + channel z.
template <typename T, int K>
__global__ void dwconv_t(const T *in, const T *wts, T *out, int H, int W)
{
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.z;
    int OW = W - K + 1, OH = H - K + 1;
    if (ox >= OW || oy >= OH) return;
    T acc = 0;
    for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j)
            acc += in[(c * H + oy + i) * W + ox + j] * wts[(c * K + i) * K + j];
    out[(c * OH + oy) * OW + ox] = acc;
}

template __global__ void dwconv_t<double, 3>(const double *, const double *, double *, int, int);
