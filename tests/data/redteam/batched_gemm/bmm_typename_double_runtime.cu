// applier: BatchedSmallMatmul
// template <typename T> with runtime sizes, instantiated for double; grid-stride over all outputs.
template <typename T>
__global__ void bmm_generic(const T *A, const T *B, T *C, int batch, int M, int N, int K)
{
    const int total = batch * M * N;
    for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += blockDim.x * gridDim.x) {
        const int b = o / (M * N);
        const int i = o / N % M;
        const int j = o % N;
        T acc = T(0);
        for (int k = 0; k < K; ++k)
            acc += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        C[o] = acc;
    }
}

template __global__ void bmm_generic<double>(const double *, const double *, double *, int, int, int, int);
