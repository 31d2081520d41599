// Runs a CUDA kernel's source on the CPU for the unit tests (no GPU on the CI machine): every
// thread of a block is a fiber, __syncthreads() a switch to the next one, __shared__ arrays static
// (blocks run one at a time), so a rewrite's indexing, guards and barriers are exercised for
// real; timing and memory-model subtleties are the GPU suite's business.
#pragma once
#include <ucontext.h>
#include <memory>
#include <vector>
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <functional>
struct dim3 { unsigned x = 1, y = 1, z = 1; };
inline dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) double2 { double x, y; };
struct alignas(16) int4 { int x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
// Every thread of a block is a fiber (ucontext) on the one OS thread, and blocks run one after
// another: __syncthreads() switches to the block's next thread, so every live thread reaches the
// barrier before any goes past it; a thread that returned has dropped out, as with arrive_and_drop.
// One OS thread with cooperative switches costs ~1 us per barrier and thread, where a std::thread
// per CUDA thread and a std::barrier cost tens (thread creation, futex wake-ups on two cores).
namespace cpu_fibers {
struct Fiber { ucontext_t context; bool done = false; };
inline ucontext_t scheduler;
inline Fiber *running = nullptr;
inline std::function<void()> *body = nullptr;
inline void entry() { (*body)(); running->done = true; }  // returns to uc_link: the scheduler
}
inline void __syncthreads() { swapcontext(&cpu_fibers::running->context, &cpu_fibers::scheduler); }
template <typename T> inline T __ldg(const T *p) { return *p; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
using std::min; using std::max;
inline void launch(dim3 grid, dim3 block, std::function<void()> body) {
    gridDim = grid; blockDim = block;
    unsigned n = block.x * block.y * block.z;
    constexpr size_t stack_bytes = 256 * 1024;  // locals of a thread (register tiles: a few KB)
    std::vector<cpu_fibers::Fiber> fibers(n);
    std::vector<std::unique_ptr<char[]>> stacks(n);
    for (auto &stack : stacks) stack.reset(new char[stack_bytes]);  // untouched pages stay unallocated
    cpu_fibers::body = &body;
    for (unsigned bz = 0; bz < grid.z; bz++) for (unsigned by = 0; by < grid.y; by++) for (unsigned bx = 0; bx < grid.x; bx++) {
        for (unsigned t = 0; t < n; t++) {
            cpu_fibers::Fiber &fiber = fibers[t];
            fiber.done = false;
            getcontext(&fiber.context);
            fiber.context.uc_stack.ss_sp = stacks[t].get();
            fiber.context.uc_stack.ss_size = stack_bytes;
            fiber.context.uc_link = &cpu_fibers::scheduler;
            makecontext(&fiber.context, cpu_fibers::entry, 0);
        }
        blockIdx = {bx, by, bz};
        // one phase: every live thread runs to its next barrier (or its end), in thread order
        for (bool live = true; live;) {
            live = false;
            for (unsigned t = 0; t < n; t++) {
                if (fibers[t].done) continue;
                threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
                cpu_fibers::running = &fibers[t];
                swapcontext(&cpu_fibers::scheduler, &fibers[t].context);
                live = live || !fibers[t].done;
            }
        }
    }
}
#define __launch_bounds__(...)
// Atomics: a block's fibers share one OS thread and switch only at a barrier (blocks run one
// after another), so a plain read-modify-write is already indivisible here.
template <class T, class U> inline T atomicAdd(T *p, U v) { T old = *p; *p = old + (T)v; return old; }
template <class T, class U> inline T atomicMax(T *p, U v) { T old = *p; *p = std::max(old, (T)v); return old; }
template <class T, class U> inline T atomicMin(T *p, U v) { T old = *p; *p = std::min(old, (T)v); return old; }
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
