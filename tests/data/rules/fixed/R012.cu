__global__ void stage(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float buffer[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buffer[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) {
        out[i] = buffer[255 - threadIdx.x];
    }
}
