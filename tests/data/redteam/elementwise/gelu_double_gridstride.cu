// tanh-GELU in double with a grid-stride loop.
// applier: VectorizedMap
__global__ void gelu_f64(const double *in, double *out, long long n)
{
    const double k0 = 0.7978845608028654;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
        double v = in[i];
        out[i] = 0.5 * v * (1.0 + tanh(k0 * (v + 0.044715 * v * v * v)));
    }
}
