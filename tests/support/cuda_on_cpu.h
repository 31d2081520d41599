// Runs a CUDA kernel's source on the CPU for the unit tests (no GPU on the CI machine): every
// thread of a block is a std::thread, __syncthreads() a std::barrier, __shared__ arrays static
// (blocks run one at a time), so a rewrite's indexing, guards and barriers are exercised for
// real; timing and memory-model subtleties are the GPU suite's business.
#pragma once
#include <thread>
#include <barrier>
#include <vector>
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <functional>
struct dim3 { unsigned x = 1, y = 1, z = 1; };
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) double2 { double x, y; };
struct alignas(16) int4 { int x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline std::barrier<>* g_bar;
inline void __syncthreads() { g_bar->arrive_and_wait(); }
template <typename T> inline T __ldg(const T *p) { return *p; }
#define __global__
#define __device__
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
using std::min; using std::max;
inline void launch(dim3 grid, dim3 block, std::function<void()> body) {
    gridDim = grid; blockDim = block;
    unsigned n = block.x * block.y * block.z;
    for (unsigned bz = 0; bz < grid.z; bz++) for (unsigned by = 0; by < grid.y; by++) for (unsigned bx = 0; bx < grid.x; bx++) {
        std::barrier<> bar(n); g_bar = &bar;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < n; t++) ts.emplace_back([&, t] {
            blockIdx = {bx, by, bz};
            threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
            body();
            bar.arrive_and_drop();
        });
        for (auto &th : ts) th.join();  // a thread that returned early has dropped out of the barrier
    }
}
#define __launch_bounds__(...)
// Stand-ins for the library pieces the block-reduction rewrites and their originals use: a
// cub::BlockReduce whose Sum/Reduce goes through its shared TempStorage with two barriers
// (thread 0 combines serially: the result, as CUB's, is only valid there), and cooperative
// groups' block handle.
namespace cub {
template <class T, int THREADS> struct BlockReduce {
    struct TempStorage { T v[THREADS]; };
    TempStorage &s;
    explicit BlockReduce(TempStorage &t) : s(t) {}
    static unsigned rank() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
    template <class Op> T Reduce(T x, Op op) {
        s.v[rank()] = x;
        __syncthreads();
        T total = s.v[0];
        if (rank() == 0) for (int i = 1; i < THREADS; i++) total = op(total, s.v[i]);
        __syncthreads();
        return total;
    }
    T Sum(T x) { return Reduce(x, [](const T &a, const T &b) { return a + b; }); }
};
}
namespace cooperative_groups {
struct thread_block {
    void sync() const { __syncthreads(); }
    unsigned thread_rank() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
    unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
};
inline thread_block this_thread_block() { return {}; }
inline void sync(const thread_block &) { __syncthreads(); }
}
