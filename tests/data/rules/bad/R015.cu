__global__ void poly(float *__restrict__ y, const float *__restrict__ c, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float x = y[i];
        float acc = 0.0f;
        for (int k = 0; k < 16; k++) {
            acc = acc * x + c[k];
        }
        y[i] = acc;
    }
}
