__global__ void stage(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float buffer[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        buffer[threadIdx.x] = in[i];
        __syncthreads();
        out[i] = buffer[255 - threadIdx.x];
    }
}
