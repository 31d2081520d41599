// applier: GroupPerRow
// Mean of each short row (a dozen features per sample), written with an index variable.
__global__ void feature_mean(const float *features, float *means, int samples, int width)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < samples) {
        float total = 0.0f;
        for (int f = 0; f < width; f++) {
            const int at = s * width + f;
            total += features[at];
        }
        means[s] = total / (float)width;
    }
}
