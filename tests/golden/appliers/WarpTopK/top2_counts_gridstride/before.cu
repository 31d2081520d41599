// applier: WarpTopK
// The two largest counts of every histogram row (grid-stride over rows), ties to the lower bin.
__global__ void top2_counts(const int *hist, int *top_count, int *top_bin, int nrows, int nbins)
{
    for (int h = blockIdx.x * blockDim.x + threadIdx.x; h < nrows; h += blockDim.x * gridDim.x) {
        int cnt[2];
        int bin[2];
        for (int s = 0; s < 2; s++) {
            cnt[s] = -1;
            bin[s] = -1;
        }
        for (int b = 0; b < nbins; b++) {
            int x = hist[h * nbins + b];
            if (x > cnt[0]) {
                cnt[1] = cnt[0];
                bin[1] = bin[0];
                cnt[0] = x;
                bin[0] = b;
            } else if (x > cnt[1]) {
                cnt[1] = x;
                bin[1] = b;
            }
        }
        for (int s = 0; s < 2; s++) {
            top_count[2 * h + s] = cnt[s];
            top_bin[2 * h + s] = bin[s];
        }
    }
}
