// Logistic sigmoid, template over the type, the guard as an if-block.
// applier: VectorizedMap
template <typename T>
__global__ void sigmoid(const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = x[i];
        y[i] = T(1) / (T(1) + exp(-v));
    }
}

// instantiated here: host code would do it with its launch
template __global__ void sigmoid<float>(const float *, float *, int);
