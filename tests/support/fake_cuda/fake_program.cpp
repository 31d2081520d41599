// A CUDA "program" for the CPU tests of the capture library: it loads CUDA_INJECTION64_PATH and
// calls InitializeInjection as the driver does, then makes launches through the fake CUPTI's
// callbacks, running each "kernel" on the host between the enter and exit callbacks:
//   saxpy(int, float, const float*, float*)   cuLaunchKernel, 5 times (y = a*x + y)
//   scale<float, 4>(float*, int)              __cudaLaunchKernel with a nested cuLaunchKernel, twice
//                                             (the second time without parameters: the driver's records)
//   add(const int*, const int*, int*, int)    the legacy cudaLaunchKernel path (layout from the name)
//   move(Params, float*)                      a struct by value (no spec can express it); the call fails
// FAKE_PROGRAM_CRASH=1 aborts inside the first saxpy launch; it prints "program output" on stdout
// and exits with FAKE_PROGRAM_EXIT (default 0).
#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

struct FakeFunction {
    const char *name;
    size_t count;
    const size_t *offsets;
    const size_t *sizes;
};

extern "C" void fake_register(void *base, size_t size);
extern "C" void fake_cupti_set_result(int result);
extern "C" void fake_cupti_call(CUpti_CallbackDomain, CUpti_CallbackId, CUpti_ApiCallbackSite, const char *,
                                const void *, uint64_t *);

struct RuntimeKernelParams {
    void *kernel;
    dim3 gridDim;
    dim3 blockDim;
    void **args;
    size_t sharedMem;
    void *stream;
};

struct Params { float a, b, c, d; };

static void driver_launch(FakeFunction *f, unsigned grid, unsigned block, void **args, void (*body)(void **)) {
    cuLaunchKernel_params p;
    std::memset(&p, 0, sizeof p);
    p.f = reinterpret_cast<CUfunction>(f);
    p.gridDimX = grid; p.gridDimY = 1; p.gridDimZ = 1;
    p.blockDimX = block; p.blockDimY = 1; p.blockDimZ = 1;
    p.kernelParams = args;
    uint64_t correlation = 0;
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, f->name, &p,
                    &correlation);
    body(args);
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, f->name, &p,
                    &correlation);
}

static void saxpy_body(void **args) {
    int n = *static_cast<int *>(args[0]);
    float a = *static_cast<float *>(args[1]);
    const float *x = *static_cast<const float **>(args[2]);
    float *y = *static_cast<float **>(args[3]);
    if (std::getenv("FAKE_PROGRAM_CRASH") != nullptr) std::abort();
    for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

static void scale_body(void **args) {
    float *x = *static_cast<float **>(args[0]);
    int n = *static_cast<int *>(args[1]);
    for (int i = 0; i < n; ++i) x[i] *= 4.0f;
}

static void add_body(void **args) {
    const int *a = *static_cast<const int **>(args[0]);
    const int *b = *static_cast<const int **>(args[1]);
    int *c = *static_cast<int **>(args[2]);
    int n = *static_cast<int *>(args[3]);
    for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

static void nothing(void **) {}

int main() {
    const char *library = std::getenv("CUDA_INJECTION64_PATH");
    if (library != nullptr) {
        void *handle = dlopen(library, RTLD_NOW);
        if (handle == nullptr) { std::fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
        auto init = reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection"));
        if (init == nullptr || init() != 1) { std::fprintf(stderr, "InitializeInjection failed\n"); return 3; }
    }
    std::printf("program output\n");
    std::fflush(stdout);

    const int n = 1000;
    static float x[1024], y[1024], s[512];
    static int ia[300], ib[300], ic[300];
    for (int i = 0; i < 1024; ++i) { x[i] = 0.5f * i; y[i] = 1.0f; }
    for (int i = 0; i < 512; ++i) s[i] = static_cast<float>(i) - 3.0f;
    for (int i = 0; i < 300; ++i) { ia[i] = i; ib[i] = 1000 - 2 * i; ic[i] = -1; }
    fake_register(x, sizeof x);
    fake_register(y, sizeof y);
    fake_register(s, sizeof s);
    fake_register(ia, sizeof ia);
    fake_register(ib, sizeof ib);
    fake_register(ic, sizeof ic);

    static const size_t saxpy_offsets[] = {0, 4, 8, 16}, saxpy_sizes[] = {4, 4, 8, 8};
    FakeFunction saxpy = {"_Z5saxpyifPKfPf", 4, saxpy_offsets, saxpy_sizes};
    int nn = n;
    float a = 2.5f;
    float *px = x, *py = y;
    void *saxpy_args[] = {&nn, &a, &px, &py};
    for (int k = 0; k < 5; ++k) driver_launch(&saxpy, (n + 255) / 256, 256, saxpy_args, saxpy_body);

    // <<<>>> in CUDA 13: the runtime's __cudaLaunchKernel, which calls the driver inside
    static const size_t scale_offsets[] = {0, 8}, scale_sizes[] = {8, 4};
    FakeFunction scale = {"_Z5scaleIfLi4EEvPT_i", 2, scale_offsets, scale_sizes};
    float *ps = s;
    int ns = 512;
    void *scale_args[] = {&ps, &ns};
    RuntimeKernelParams rp = {&scale, dim3(4), dim3(128), scale_args, 0, nullptr};
    uint64_t correlation = 0;
    fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_ENTER,
                    scale.name, &rp, &correlation);
    driver_launch(&scale, 4, 128, scale_args, scale_body);  // nested: the same launch, recorded once
    fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_EXIT,
                    scale.name, &rp, &correlation);

    // a runtime launch whose parameters CUPTI does not give: the nested driver call records it
    correlation = 0;
    fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_ENTER,
                    scale.name, nullptr, &correlation);
    driver_launch(&scale, 4, 128, scale_args, scale_body);
    fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_EXIT,
                    scale.name, nullptr, &correlation);

    // cudaLaunchKernel with a host stub: the layout comes from the demangled signature
    const int *pa = ia, *pb = ib;
    int *pc = ic;
    int na = 300;
    void *add_args[] = {&pa, &pb, &pc, &na};
    cudaLaunchKernel_v7000_params lp;
    std::memset(&lp, 0, sizeof lp);
    lp.func = reinterpret_cast<const void *>(&add_body);
    lp.gridDim = dim3(2);
    lp.blockDim = dim3(160);
    lp.args = add_args;
    correlation = 0;
    fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER,
                    "_Z3addPKiS0_Pii", &lp, &correlation);
    add_body(add_args);
    fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT,
                    "_Z3addPKiS0_Pii", &lp, &correlation);

    static const size_t move_offsets[] = {0, 16}, move_sizes[] = {16, 8};
    FakeFunction move = {"_Z4move6ParamsPf", 2, move_offsets, move_sizes};
    Params params = {1.0f, 2.0f, 3.0f, 4.0f};
    void *move_args[] = {&params, &px};
    fake_cupti_set_result(CUDA_ERROR_INVALID_VALUE);  // this launch call fails: its kernel never runs
    driver_launch(&move, 1, 32, move_args, nothing);
    fake_cupti_set_result(CUDA_SUCCESS);

    const char *code = std::getenv("FAKE_PROGRAM_EXIT");
    return code != nullptr ? std::atoi(code) : 0;
}
