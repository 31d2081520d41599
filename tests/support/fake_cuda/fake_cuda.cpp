// A stand-in for libcuda.so.1 (CPU tests of the capture library, tests/unit/capture/): "device"
// pointers are host pointers the test program registers as allocations; copies are memcpy.
#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
struct Alloc {
    CUdeviceptr base;
    size_t size;
};
Alloc g_allocs[64];
int g_count = 0;
}  // namespace

struct FakeFunction {
    const char *name;
    size_t count;
    const size_t *offsets;
    const size_t *sizes;
};

extern "C" {
void fake_register(void *base, size_t size) {
    g_allocs[g_count].base = reinterpret_cast<CUdeviceptr>(base);
    g_allocs[g_count].size = size;
    g_count++;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr ptr) {
    for (int i = 0; i < g_count; ++i) {
        if (ptr >= g_allocs[i].base && ptr < g_allocs[i].base + g_allocs[i].size) {
            *base = g_allocs[i].base;
            *size = g_allocs[i].size;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    CUdeviceptr base;
    size_t size;
    if (cuMemGetAddressRange(&base, &size, ptr) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    if (attribute == CU_POINTER_ATTRIBUTE_IS_MANAGED) *static_cast<unsigned *>(data) = 0;
    else if (attribute == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) *static_cast<unsigned *>(data) = CU_MEMORYTYPE_DEVICE;
    else return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size) {
    auto *fn = reinterpret_cast<FakeFunction *>(f);
    if (index >= fn->count) return CUDA_ERROR_INVALID_VALUE;
    *offset = fn->offsets[index];
    *size = fn->sizes[index];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel k, size_t index, size_t *offset, size_t *size) {
    return cuFuncGetParamInfo(reinterpret_cast<CUfunction>(k), index, offset, size);
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction f) {
    *name = reinterpret_cast<FakeFunction *>(f)->name;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel k) {
    *name = reinterpret_cast<FakeFunction *>(k)->name;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) { *device = 0; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx) { *ctx = reinterpret_cast<CUcontext>(1); return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxPushCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxPopCurrent(CUcontext *ctx) { *ctx = nullptr; return CUDA_SUCCESS; }

CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t size) {
    std::memcpy(dst, reinterpret_cast<const void *>(src), size);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream, CUstreamCaptureStatus *status) {
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

// what `regrapht capture` asks before it runs the program: FAKE_CUINIT_FAIL=1 as a broken driver,
// FAKE_NO_DEVICE=1 as a machine without a GPU
CUresult CUDAAPI cuInit(unsigned int) {
    return std::getenv("FAKE_CUINIT_FAIL") != nullptr ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
    *count = std::getenv("FAKE_NO_DEVICE") != nullptr ? 0 : 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult, const char **name) {
    *name = "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}
}
