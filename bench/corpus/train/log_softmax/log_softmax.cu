// log_softmax over the classes of every sample: one thread per sample.
#include <cuda_runtime.h>
#include <math.h>

__global__ void log_softmax(const float *logits, float *logp, int batch, int classes)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < batch) {
        int base = b * classes;
        float m = logits[base];
        for (int k = 1; k < classes; k++)
            if (logits[base + k] > m)
                m = logits[base + k];
        float s = 0.f;
        for (int k = 0; k < classes; k++)
            s += expf(logits[base + k] - m);
        float lse = m + logf(s);
        for (int k = 0; k < classes; k++)
            logp[base + k] = logits[base + k] - lse;
    }
}
