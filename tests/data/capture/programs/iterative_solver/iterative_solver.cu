// An iterative solver: weighted Jacobi for the 1-D Poisson problem -u'' = f with u = 0 at both
// ends, on n points. Per iteration a Jacobi sweep (<<<>>>) and a relaxation launched through the
// driver API (cuLaunchKernel); every 5 iterations the squared residual is summed by a chunked
// reduction launched with cudaLaunchKernel. Prints the residual norms.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t status_ = (call);                                                    \
        if (status_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            std::exit(2);                                                                \
        }                                                                                \
    } while (0)

#define CHECK_DRIVER(call)                                                               \
    do {                                                                                 \
        CUresult status_ = (call);                                                       \
        if (status_ != CUDA_SUCCESS) {                                                   \
            std::fprintf(stderr, "%s:%d: CUresult %d\n", __FILE__, __LINE__, (int)status_); \
            std::exit(2);                                                                \
        }                                                                                \
    } while (0)

__global__ void jacobi_step(const float *u, const float *f, float *u_next, int n, float h2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float left = i > 0 ? u[i - 1] : 0.0f;
        float right = i < n - 1 ? u[i + 1] : 0.0f;
        u_next[i] = 0.5f * (left + right + h2 * f[i]);
    }
}

__global__ void relax(float *u_next, const float *u, int n, float omega)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        u_next[i] = omega * u_next[i] + (1.0f - omega) * u[i];
    }
}

__global__ void residual(const float *u, const float *f, float *r, int n, float h2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float left = i > 0 ? u[i - 1] : 0.0f;
        float right = i < n - 1 ? u[i + 1] : 0.0f;
        float e = f[i] - (2.0f * u[i] - left - right) / h2;
        r[i] = e * e;
    }
}

// Each thread sums a contiguous chunk, then adds it to the total atomically.
__global__ void reduce_sum(const float *in, float *out, int n, int chunk)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = 0; i < chunk; i++) {
        int idx = t * chunk + i;
        if (idx < n) {
            acc += in[idx];
        }
    }
    atomicAdd(out, acc);
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : (1 << 22);
    const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
    const float h = 1.0f / (n + 1), h2 = h * h, omega = 0.8f;
    std::vector<float> rhs(n);
    for (int i = 0; i < n; i++) {
        rhs[i] = std::sin(3.0f * static_cast<float>(i) * h) + 0.25f;
    }
    float *u, *u_next, *f, *r, *sum;
    CHECK(cudaMalloc(&u, n * sizeof(float)));
    CHECK(cudaMalloc(&u_next, n * sizeof(float)));
    CHECK(cudaMalloc(&f, n * sizeof(float)));
    CHECK(cudaMalloc(&r, n * sizeof(float)));
    CHECK(cudaMalloc(&sum, sizeof(float)));
    CHECK(cudaMemset(u, 0, n * sizeof(float)));
    CHECK(cudaMemcpy(f, rhs.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    // the driver's cuLaunchKernel through the runtime's entry-point query: no link to libcuda
    PFN_cuLaunchKernel_v4000 launch_kernel = nullptr;
    cudaDriverEntryPointQueryResult found;
    CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", reinterpret_cast<void **>(&launch_kernel), 4000,
                                           cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || launch_kernel == nullptr) {
        std::fprintf(stderr, "cuLaunchKernel is not available\n");
        return 2;
    }
    cudaFunction_t relax_function;
    CHECK(cudaGetFuncBySymbol(&relax_function, reinterpret_cast<const void *>(relax)));
    const int blocks = (n + 255) / 256;
    int chunk = 64;
    const int reduce_blocks = ((n + chunk - 1) / chunk + 127) / 128;
    for (int it = 1; it <= iterations; it++) {
        jacobi_step<<<blocks, 256>>>(u, f, u_next, n, h2);
        float *relax_out = u_next;
        const float *relax_in = u;
        int count = n;
        float weight = omega;
        void *relax_args[] = {&relax_out, &relax_in, &count, &weight};
        CHECK_DRIVER(launch_kernel(reinterpret_cast<CUfunction>(relax_function), blocks, 1, 1, 256, 1, 1, 0,
                                   nullptr, relax_args, nullptr));
        float *swap = u;
        u = u_next;
        u_next = swap;
        if (it % 5 == 0) {
            residual<<<blocks, 256>>>(u, f, r, n, h2);
            CHECK(cudaMemset(sum, 0, sizeof(float)));
            void *reduce_args[] = {&r, &sum, &count, &chunk};
            CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(reduce_sum), dim3(reduce_blocks), dim3(128),
                                   reduce_args, 0, nullptr));
            float total = 0.0f;
            CHECK(cudaMemcpy(&total, sum, sizeof(float), cudaMemcpyDeviceToHost));
            std::printf("iteration %d: residual %.6e\n", it, std::sqrt(total / n));
        }
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    return 0;
}
