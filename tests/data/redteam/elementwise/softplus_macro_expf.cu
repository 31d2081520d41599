// Softplus with a macro for the global index and log1pf/expf.
// applier: VectorizedMap
#define GLOBAL_ID (blockIdx.x * blockDim.x + threadIdx.x)

__global__ void softplus(const float *__restrict__ in, float *__restrict__ out, int len, float beta)
{
    const int id = GLOBAL_ID;
    if (id < len)
        out[id] = log1pf(expf(beta * in[id])) / beta;
}
