// ReGraphT's launch-capture injection library (docs/capture.md).
//
// The CUDA driver loads it through CUDA_INJECTION64_PATH and calls InitializeInjection() when the
// program initialises CUDA. It subscribes to CUPTI's callback API for the kernel launch entry points
// (driver: cuLaunchKernel, cuLaunchKernelEx and their per-thread-stream variants; runtime:
// cudaLaunchKernel, cudaLaunchKernelExC and CUDA 13's __cudaLaunchKernel that `<<<>>>` compiles to)
// and, for every launch whose kernel matches the filter, writes one JSON line to
// DIR/launches.jsonl: the mangled and demangled names, grid, block, dynamic shared memory, the
// parameter buffer (offsets and sizes from cuFuncGetParamInfo / cuKernelGetParamInfo, or from the
// demangled signature on the legacy runtime path), and for each 8-byte parameter that points into
// device memory the allocation (cuMemGetAddressRange) and the offset. With data on, each such
// allocation is copied to DIR/data/ before the launch and again after it (the launch's stream
// synchronised both times), up to a size cap, and the changed byte range is recorded.
//
// Nothing in the program is changed: the library only reads. CUPTI itself and the driver entry
// points are resolved at run time (dlopen/dlsym), so a missing or incompatible libcupti is written
// to DIR/status.json as a clear error instead of the driver silently skipping the library.
//
// Configuration (environment, set by `regrapht capture`):
//   REGRAPHT_CAPTURE_DIR        output folder (must exist)
//   REGRAPHT_CAPTURE_CUPTI      path of libcupti.so to load
//   REGRAPHT_CAPTURE_KERNEL     ECMAScript regex searched in the mangled and the demangled name
//   REGRAPHT_CAPTURE_LAUNCHES   launches recorded per kernel (default 3)
//   REGRAPHT_CAPTURE_DATA       "1": snapshot the allocations before and after each recorded launch
//   REGRAPHT_CAPTURE_MAX_BYTES  largest allocation snapshotted (default 256 MiB)
//   REGRAPHT_CAPTURE_TOTAL_BYTES  all snapshots of the run together (default 4 GiB)

#include <cuda.h>
#include <cupti.h>  // with generated_cuda_meta.h and generated_cuda_runtime_api_meta.h
#include <cuda_runtime_api.h>

#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#define RG_STR(x) #x
#define RG_XSTR(x) RG_STR(x)  // expands cuda.h's versioning macros (cuMemGetAddressRange -> _v2)

namespace {

// The parameters of CUDA 13's __cudaLaunchKernel / __cudaLaunchKernel_ptsz, which CUPTI reports
// for `<<<>>>` launches; laid out as the declaration in crt/device_functions.h.
struct RgRuntimeKernelLaunchParams {
    cudaKernel_t kernel;
    dim3 gridDim;
    dim3 blockDim;
    void **args;
    size_t sharedMem;
    cudaStream_t stream;
};

struct Driver {
    decltype(&cuMemGetAddressRange) memGetAddressRange = nullptr;
    decltype(&cuPointerGetAttribute) pointerGetAttribute = nullptr;
    decltype(&cuFuncGetParamInfo) funcGetParamInfo = nullptr;
    decltype(&cuKernelGetParamInfo) kernelGetParamInfo = nullptr;
    decltype(&cuFuncGetName) funcGetName = nullptr;
    decltype(&cuKernelGetName) kernelGetName = nullptr;
    decltype(&cuCtxSynchronize) ctxSynchronize = nullptr;
    decltype(&cuStreamSynchronize) streamSynchronize = nullptr;
    decltype(&cuCtxGetDevice) ctxGetDevice = nullptr;
    decltype(&cuCtxGetCurrent) ctxGetCurrent = nullptr;
    decltype(&cuCtxPushCurrent) ctxPushCurrent = nullptr;
    decltype(&cuCtxPopCurrent) ctxPopCurrent = nullptr;
    decltype(&cuMemcpyDtoH) memcpyDtoH = nullptr;
    decltype(&cuStreamIsCapturing) streamIsCapturing = nullptr;
    decltype(&cuGetErrorName) getErrorName = nullptr;
};

struct Cupti {
    decltype(&cuptiSubscribe) subscribe = nullptr;
    decltype(&cuptiEnableCallback) enableCallback = nullptr;
    decltype(&cuptiGetResultString) getResultString = nullptr;
};

struct Config {
    std::string dir;
    bool has_filter = false;
    std::regex filter;
    long per_kernel = 3;
    bool data = false;
    unsigned long long max_bytes = 256ull << 20;
    unsigned long long total_bytes = 4ull << 30;
};

struct Param {
    size_t offset = 0;
    size_t size = 0;
    std::string bytes;  // the value as the kernel receives it
};

struct Snapshot {
    unsigned long long base = 0;
    unsigned long long size = 0;
    bool managed = false;
    unsigned memory_type = 0;
    std::string before_file;
    std::string after_file;
    std::vector<unsigned char> before;
    bool taken = false;
    bool compared = false;
    long long first_written = -1;
    long long last_written = -1;
    unsigned long long bytes_written = 0;
    std::string note;
};

struct Pending {
    long id = 0;
    std::string api;
    std::string mangled;
    std::string demangled;
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    unsigned long long shared = 0;
    unsigned long long stream = 0;
    CUstream stream_handle = nullptr;  // what the launch runs on (the per-thread stream for a _ptsz null)
    int device = -1;
    bool capturing = false;
    std::string param_info;  // "driver", "kernel", "signature", "none"
    std::vector<Param> params;
    // per parameter: index into snapshots, or -1 when not a device pointer
    std::vector<int> param_alloc;
    std::vector<unsigned long long> param_offset;
    std::vector<Snapshot> snapshots;
    std::vector<std::string> notes;
    std::string error;
};

struct State {
    Config config;
    Driver driver;
    Cupti cupti;
    CUpti_SubscriberHandle subscriber = nullptr;
    std::mutex mutex;
    std::map<std::string, long> seen;      // matching launches per mangled name
    std::map<std::string, long> recorded;  // recorded launches per mangled name
    std::map<std::string, std::string> names;  // mangled -> demangled
    long next_id = 1;
    unsigned long long snapshot_bytes = 0;
    FILE *launches = nullptr;
};

State *g_state = nullptr;  // made once in InitializeInjection, never freed (driver teardown order)
thread_local int t_depth = 0;  // decoded launch calls of this thread in progress (runtime -> driver nesting)
// A legacy runtime launch whose signature cannot be sized (a struct by value), left to the driver
// launch the runtime makes inside it, which knows the layout; recorded at its exit if none came.
thread_local bool t_deferred = false;
thread_local bool t_deferred_taken = false;

std::string json_string(const std::string &text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

std::string hex_of(const std::string &bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string demangle(const std::string &mangled) {
    int status = 0;
    char *text = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
    if (status != 0 || text == nullptr) {
        return mangled;  // extern "C" kernels are not mangled
    }
    std::string out(text);
    std::free(text);
    return out;
}

std::string cu_error(State &s, CUresult code) {
    const char *name = nullptr;
    if (s.driver.getErrorName != nullptr && s.driver.getErrorName(code, &name) == CUDA_SUCCESS && name) {
        return name;
    }
    return "CUresult " + std::to_string(static_cast<int>(code));
}

void write_file(const std::string &path, const std::string &text) {
    std::string tmp = path + ".tmp";
    FILE *f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
        return;
    }
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    std::rename(tmp.c_str(), path.c_str());
}

void write_status(const std::string &dir, const std::string &state, const std::string &error, int code) {
    std::string text = "{\"state\": " + json_string(state) + ", \"pid\": " + std::to_string(getpid());
    text += ", \"error\": " + (error.empty() ? std::string("null") : json_string(error));
    text += ", \"code\": " + std::to_string(code) + "}\n";
    write_file(dir + "/status.json", text);
}

bool write_bytes(const std::string &path, const unsigned char *data, size_t size) {
    FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        return false;
    }
    bool ok = std::fwrite(data, 1, size, f) == size;
    return std::fclose(f) == 0 && ok;
}

unsigned long long env_number(const char *name, unsigned long long fallback) {
    const char *text = std::getenv(name);
    if (text == nullptr || *text == '\0') {
        return fallback;
    }
    char *end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(text, &end, 10);
    return (errno == 0 && end != nullptr && *end == '\0') ? value : fallback;
}

// Sizes of the parameters of a demangled signature `f<...>(float const*, int, ...)`, for the
// legacy runtime path (cudaLaunchKernel with a host stub) where no CUfunction is at hand. Stops
// at the first type it cannot size (a struct passed by value).
bool sizes_from_signature(const std::string &demangled, std::vector<size_t> &sizes) {
    size_t open = std::string::npos;
    int depth = 0;
    for (size_t i = 0; i < demangled.size(); ++i) {
        char c = demangled[i];
        if (c == '<') depth++;
        else if (c == '>') depth--;
        else if (c == '(' && depth == 0) { open = i; break; }
    }
    size_t close = demangled.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) {
        return false;
    }
    std::string inner = demangled.substr(open + 1, close - open - 1);
    if (inner.empty() || inner == "void") {
        return true;
    }
    std::vector<std::string> parts;
    std::string current;
    depth = 0;
    for (char c : inner) {
        if (c == ',' && depth == 0) { parts.push_back(current); current.clear(); continue; }
        if (c == '<' || c == '(') depth++;
        if (c == '>' || c == ')') depth--;
        current += c;
    }
    parts.push_back(current);
    static const std::map<std::string, size_t> scalars = {
        {"bool", 1}, {"char", 1}, {"signed char", 1}, {"unsigned char", 1}, {"short", 2},
        {"unsigned short", 2}, {"int", 4}, {"unsigned int", 4}, {"float", 4}, {"long", 8},
        {"unsigned long", 8}, {"long long", 8}, {"unsigned long long", 8}, {"double", 8}};
    for (std::string part : parts) {
        size_t a = part.find_first_not_of(' ');
        size_t b = part.find_last_not_of(' ');
        part = a == std::string::npos ? std::string() : part.substr(a, b - a + 1);
        if (!part.empty() && part.back() == '*') { sizes.push_back(8); continue; }
        if (part.rfind("const ", 0) == 0) part = part.substr(6);
        if (part.size() > 6 && part.compare(part.size() - 6, 6, " const") == 0) part.resize(part.size() - 6);
        auto found = scalars.find(part);
        if (found == scalars.end()) {
            return false;
        }
        sizes.push_back(found->second);
    }
    return true;
}

void params_from_sizes(const std::vector<size_t> &sizes, void **args, Pending &p) {
    size_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        size_t size = sizes[i];
        offset = (offset + size - 1) / size * size;  // natural alignment of scalars and pointers
        Param param;
        param.offset = offset;
        param.size = size;
        param.bytes.assign(static_cast<const char *>(args[i]), size);
        p.params.push_back(param);
        offset += size;
    }
}

// Parameters from the driver's layout (index -> offset, size) and either kernelParams (one pointer
// per parameter) or `extra` (one packed buffer).
template <typename Query>
void params_from_layout(Query query, void **kernel_params, void **extra, Pending &p) {
    std::vector<std::pair<size_t, size_t>> layout;
    for (size_t index = 0; index < 4096; ++index) {
        size_t offset = 0, size = 0;
        if (query(index, &offset, &size) != CUDA_SUCCESS) {
            break;
        }
        layout.emplace_back(offset, size);
    }
    const char *packed = nullptr;
    size_t packed_size = 0;
    if (kernel_params == nullptr && extra != nullptr) {
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) packed = static_cast<const char *>(extra[i + 1]);
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) packed_size = *static_cast<size_t *>(extra[i + 1]);
        }
    }
    for (size_t i = 0; i < layout.size(); ++i) {
        Param param;
        param.offset = layout[i].first;
        param.size = layout[i].second;
        if (kernel_params != nullptr) {
            param.bytes.assign(static_cast<const char *>(kernel_params[i]), param.size);
        } else if (packed != nullptr && param.offset + param.size <= packed_size) {
            param.bytes.assign(packed + param.offset, param.size);
        } else {
            p.notes.push_back("parameter " + std::to_string(i) + ": value not available");
            param.bytes.assign(param.size, '\0');
        }
        p.params.push_back(param);
    }
}

bool matches(State &s, const std::string &mangled, const std::string &demangled) {
    if (!s.config.has_filter) {
        return true;
    }
    return std::regex_search(mangled, s.config.filter) || std::regex_search(demangled, s.config.filter);
}

// Which allocation each 8-byte parameter points into; one snapshot per distinct allocation.
void find_allocations(State &s, Pending &p) {
    p.param_alloc.assign(p.params.size(), -1);
    p.param_offset.assign(p.params.size(), 0);
    if (s.driver.memGetAddressRange == nullptr) {
        p.notes.push_back("cuMemGetAddressRange is not available: pointers are not resolved");
        return;
    }
    for (size_t i = 0; i < p.params.size(); ++i) {
        const Param &param = p.params[i];
        if (param.size != 8) {
            continue;
        }
        unsigned long long value = 0;
        std::memcpy(&value, param.bytes.data(), 8);
        if (value == 0) {
            continue;
        }
        CUdeviceptr base = 0;
        size_t size = 0;
        if (s.driver.memGetAddressRange(&base, &size, static_cast<CUdeviceptr>(value)) != CUDA_SUCCESS) {
            continue;  // not device memory: a scalar, or a host pointer
        }
        int found = -1;
        for (size_t k = 0; k < p.snapshots.size(); ++k) {
            if (p.snapshots[k].base == base) found = static_cast<int>(k);
        }
        if (found < 0) {
            Snapshot snap;
            snap.base = base;
            snap.size = size;
            if (s.driver.pointerGetAttribute != nullptr) {
                unsigned int managed = 0, type = 0;
                if (s.driver.pointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                                 static_cast<CUdeviceptr>(value)) == CUDA_SUCCESS) {
                    snap.managed = managed != 0;
                }
                if (s.driver.pointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                 static_cast<CUdeviceptr>(value)) == CUDA_SUCCESS) {
                    snap.memory_type = type;
                }
            }
            p.snapshots.push_back(snap);
            found = static_cast<int>(p.snapshots.size() - 1);
        }
        p.param_alloc[i] = found;
        p.param_offset[i] = value - base;
    }
}

std::string snapshot_name(long id, size_t k, const char *when) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "data/L%06ld-A%zu.%s.bin", id, k, when);
    return buf;
}

// Waits for the launch's stream: what the kernel depends on is ordered before it there, and the
// kernel itself before what follows. Other streams run on (a whole-context synchronisation
// would also break another stream's graph capture).
CUresult synchronize(State &s, const Pending &p) {
    if (s.driver.streamSynchronize != nullptr) {
        return s.driver.streamSynchronize(p.stream_handle);
    }
    return s.driver.ctxSynchronize();
}

void take_before(State &s, Pending &p) {
    if (p.capturing) {
        p.notes.push_back("the stream is being captured into a CUDA graph: the launch does not run now, no data");
        return;
    }
    CUresult sync = synchronize(s, p);
    if (sync != CUDA_SUCCESS) {
        p.notes.push_back("synchronizing the stream before the launch failed (" + cu_error(s, sync) + "): no data");
        return;
    }
    for (size_t k = 0; k < p.snapshots.size(); ++k) {
        Snapshot &snap = p.snapshots[k];
        if (snap.size > s.config.max_bytes) {
            snap.note = "allocation of " + std::to_string(snap.size) + " bytes is over the snapshot cap of " +
                        std::to_string(s.config.max_bytes) + " bytes (--max-bytes)";
            continue;
        }
        if (s.snapshot_bytes + 2 * snap.size > s.config.total_bytes) {
            snap.note = "the capture's snapshot total of " + std::to_string(s.config.total_bytes) +
                        " bytes is reached (--total-bytes)";
            continue;
        }
        snap.before.resize(snap.size);
        CUresult copied = s.driver.memcpyDtoH(snap.before.data(), static_cast<CUdeviceptr>(snap.base), snap.size);
        if (copied != CUDA_SUCCESS) {
            snap.note = "copying the allocation failed (" + cu_error(s, copied) + ")";
            snap.before.clear();
            continue;
        }
        snap.before_file = snapshot_name(p.id, k, "before");
        if (!write_bytes(s.config.dir + "/" + snap.before_file, snap.before.data(), snap.size)) {
            snap.note = "cannot write " + snap.before_file + ": " + std::strerror(errno);
            snap.before_file.clear();
            snap.before.clear();
            continue;
        }
        s.snapshot_bytes += snap.size;
        snap.taken = true;
    }
}

void take_after(State &s, Pending &p) {
    bool any = false;
    for (const Snapshot &snap : p.snapshots) any = any || snap.taken;
    if (!any) {
        return;
    }
    CUresult sync = synchronize(s, p);
    if (sync != CUDA_SUCCESS) {
        p.error = "the launch failed: " + cu_error(s, sync);
        return;
    }
    std::vector<unsigned char> after;
    for (size_t k = 0; k < p.snapshots.size(); ++k) {
        Snapshot &snap = p.snapshots[k];
        if (!snap.taken) {
            continue;
        }
        after.resize(snap.size);
        CUresult copied = s.driver.memcpyDtoH(after.data(), static_cast<CUdeviceptr>(snap.base), snap.size);
        if (copied != CUDA_SUCCESS) {
            snap.note = "copying the allocation after the launch failed (" + cu_error(s, copied) + ")";
            continue;
        }
        for (unsigned long long b = 0; b < snap.size; ++b) {
            if (after[b] != snap.before[b]) {
                if (snap.first_written < 0) snap.first_written = static_cast<long long>(b);
                snap.last_written = static_cast<long long>(b);
                snap.bytes_written++;
            }
        }
        snap.compared = true;
        if (snap.bytes_written > 0) {
            snap.after_file = snapshot_name(p.id, k, "after");
            if (!write_bytes(s.config.dir + "/" + snap.after_file, after.data(), snap.size)) {
                snap.note = "cannot write " + snap.after_file + ": " + std::strerror(errno);
                snap.after_file.clear();
            } else {
                s.snapshot_bytes += snap.size;
            }
        }
        std::vector<unsigned char>().swap(snap.before);
    }
}

std::string launch_json(const Pending &p, const char *phase) {
    std::string j = "{\"id\": " + std::to_string(p.id) + ", \"phase\": " + json_string(phase);
    j += ", \"api\": " + json_string(p.api) + ", \"mangled\": " + json_string(p.mangled);
    j += ", \"demangled\": " + json_string(p.demangled);
    j += ", \"grid\": [" + std::to_string(p.grid[0]) + ", " + std::to_string(p.grid[1]) + ", " +
         std::to_string(p.grid[2]) + "]";
    j += ", \"block\": [" + std::to_string(p.block[0]) + ", " + std::to_string(p.block[1]) + ", " +
         std::to_string(p.block[2]) + "]";
    j += ", \"shared_bytes\": " + std::to_string(p.shared) + ", \"stream\": " + std::to_string(p.stream);
    j += ", \"device\": " + std::to_string(p.device) + ", \"capturing\": " + (p.capturing ? "true" : "false");
    j += ", \"param_info\": " + json_string(p.param_info) + ", \"params\": [";
    for (size_t i = 0; i < p.params.size(); ++i) {
        const Param &param = p.params[i];
        j += i ? ", " : "";
        j += "{\"offset\": " + std::to_string(param.offset) + ", \"size\": " + std::to_string(param.size);
        j += ", \"hex\": " + json_string(hex_of(param.bytes));
        if (i < p.param_alloc.size() && p.param_alloc[i] >= 0) {
            j += ", \"allocation\": " + std::to_string(p.param_alloc[i]);
            j += ", \"alloc_offset\": " + std::to_string(p.param_offset[i]);
        }
        j += "}";
    }
    j += "], \"allocations\": [";
    for (size_t k = 0; k < p.snapshots.size(); ++k) {
        const Snapshot &snap = p.snapshots[k];
        j += k ? ", " : "";
        j += "{\"base\": " + std::to_string(snap.base) + ", \"size\": " + std::to_string(snap.size);
        j += ", \"managed\": " + std::string(snap.managed ? "true" : "false");
        j += ", \"memory_type\": " + std::to_string(snap.memory_type);
        j += ", \"before\": " + (snap.before_file.empty() ? std::string("null") : json_string(snap.before_file));
        j += ", \"after\": " + (snap.after_file.empty() ? std::string("null") : json_string(snap.after_file));
        if (snap.compared) {
            j += ", \"written\": {\"bytes\": " + std::to_string(snap.bytes_written) + ", \"first\": " +
                 std::to_string(snap.first_written) + ", \"last\": " + std::to_string(snap.last_written) + "}";
        } else {
            j += ", \"written\": null";
        }
        j += ", \"note\": " + (snap.note.empty() ? std::string("null") : json_string(snap.note)) + "}";
    }
    j += "], \"notes\": [";
    for (size_t i = 0; i < p.notes.size(); ++i) {
        j += (i ? ", " : "") + json_string(p.notes[i]);
    }
    j += "], \"error\": " + (p.error.empty() ? std::string("null") : json_string(p.error)) + "}\n";
    return j;
}

void emit(State &s, const Pending &p, const char *phase) {
    if (s.launches == nullptr) {
        return;
    }
    std::string line = launch_json(p, phase);
    std::fwrite(line.data(), 1, line.size(), s.launches);
    std::fflush(s.launches);  // a crash of the program keeps every launch written so far
}

struct Launch {
    std::string api;
    CUfunction function = nullptr;
    CUkernel kernel = nullptr;
    bool legacy_runtime = false;
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    unsigned long long shared = 0;
    CUstream stream = nullptr;
    void **kernel_params = nullptr;
    void **extra = nullptr;
};

bool decode(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *info, Launch &l) {
    auto dims = [&l](unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz) {
        l.grid[0] = gx; l.grid[1] = gy; l.grid[2] = gz;
        l.block[0] = bx; l.block[1] = by; l.block[2] = bz;
    };
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz) {
            auto *p = static_cast<const cuLaunchKernel_params *>(info->functionParams);
            l.api = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? "cuLaunchKernel" : "cuLaunchKernel_ptsz";
            l.function = p->f;
            dims(p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ);
            l.shared = p->sharedMemBytes;
            l.stream = p->hStream;
            l.kernel_params = p->kernelParams;
            l.extra = p->extra;
            return true;
        }
        if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
            auto *p = static_cast<const cuLaunchKernelEx_params *>(info->functionParams);
            const CUlaunchConfig *c = p->config;
            l.api = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ? "cuLaunchKernelEx" : "cuLaunchKernelEx_ptsz";
            l.function = p->f;
            dims(c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ);
            l.shared = c->sharedMemBytes;
            l.stream = c->hStream;
            l.kernel_params = p->kernelParams;
            l.extra = p->extra;
            return true;
        }
        return false;
    }
    if (cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
        cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000) {
        auto *p = static_cast<const RgRuntimeKernelLaunchParams *>(info->functionParams);
        l.api = cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ? "__cudaLaunchKernel"
                                                                          : "__cudaLaunchKernel_ptsz";
        l.kernel = reinterpret_cast<CUkernel>(p->kernel);
        dims(p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y, p->blockDim.z);
        l.shared = p->sharedMem;
        l.stream = reinterpret_cast<CUstream>(p->stream);
        l.kernel_params = p->args;
        return true;
    }
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000) {
        auto *p = static_cast<const cudaLaunchKernel_v7000_params *>(info->functionParams);
        l.api = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ? "cudaLaunchKernel" : "cudaLaunchKernel_ptsz";
        l.legacy_runtime = true;
        dims(p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y, p->blockDim.z);
        l.shared = p->sharedMem;
        l.stream = reinterpret_cast<CUstream>(p->stream);
        l.kernel_params = p->args;
        return true;
    }
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060) {
        auto *p = static_cast<const cudaLaunchKernelExC_v11060_params *>(info->functionParams);
        const cudaLaunchConfig_t *c = p->config;
        l.api = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ? "cudaLaunchKernelExC"
                                                                            : "cudaLaunchKernelExC_ptsz";
        l.legacy_runtime = true;
        dims(c->gridDim.x, c->gridDim.y, c->gridDim.z, c->blockDim.x, c->blockDim.y, c->blockDim.z);
        l.shared = c->dynamicSmemBytes;
        l.stream = reinterpret_cast<CUstream>(c->stream);
        l.kernel_params = p->args;
        return true;
    }
    return false;
}

std::string kernel_name(State &s, const Launch &l, const CUpti_CallbackData *info) {
    const char *name = nullptr;
    if (l.function != nullptr && s.driver.funcGetName != nullptr && s.driver.funcGetName(&name, l.function) == CUDA_SUCCESS &&
        name != nullptr) {
        return name;
    }
    if (l.kernel != nullptr && s.driver.kernelGetName != nullptr && s.driver.kernelGetName(&name, l.kernel) == CUDA_SUCCESS &&
        name != nullptr) {
        return name;
    }
    return info->symbolName != nullptr ? info->symbolName : "";
}

// Whether the launch's parameters can be laid out without the driver: it gives a CUfunction or a
// CUkernel, or its demangled signature has only types of known sizes.
bool layout_known(State &s, const Launch &l, const CUpti_CallbackData *info) {
    if (l.function != nullptr || l.kernel != nullptr || l.kernel_params == nullptr) {
        return true;
    }
    std::string mangled = kernel_name(s, l, info);
    std::string demangled;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        auto known = s.names.find(mangled);
        if (known == s.names.end()) {
            known = s.names.emplace(mangled, demangle(mangled)).first;
        }
        demangled = known->second;
    }
    std::vector<size_t> sizes;
    return sizes_from_signature(demangled, sizes);
}

void on_enter(State &s, const Launch &l, const CUpti_CallbackData *info) {
    std::string mangled = kernel_name(s, l, info);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto known = s.names.find(mangled);
    if (known == s.names.end()) {
        known = s.names.emplace(mangled, demangle(mangled)).first;
    }
    const std::string &demangled = known->second;
    if (!matches(s, mangled, demangled)) {
        return;
    }
    ++s.seen[mangled];
    if (s.recorded[mangled] >= s.config.per_kernel) {
        return;
    }
    s.recorded[mangled]++;
    auto *p = new Pending();
    p->id = s.next_id++;
    p->api = l.api;
    p->mangled = mangled;
    p->demangled = demangled;
    std::memcpy(p->grid, l.grid, sizeof p->grid);
    std::memcpy(p->block, l.block, sizeof p->block);
    p->shared = l.shared;
    p->stream = reinterpret_cast<unsigned long long>(l.stream);
    p->stream_handle = l.stream;
    if (l.stream == nullptr && l.api.size() > 5 && l.api.compare(l.api.size() - 5, 5, "_ptsz") == 0) {
        p->stream_handle = CU_STREAM_PER_THREAD;  // a null stream of a per-thread-stream entry point
    }
    CUdevice device = -1;
    if (s.driver.ctxGetDevice != nullptr && s.driver.ctxGetDevice(&device) == CUDA_SUCCESS) {
        p->device = device;
    }
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (s.driver.streamIsCapturing != nullptr && s.driver.streamIsCapturing(p->stream_handle, &capture) == CUDA_SUCCESS) {
        p->capturing = capture != CU_STREAM_CAPTURE_STATUS_NONE;
    }
    if (l.function != nullptr && s.driver.funcGetParamInfo != nullptr) {
        p->param_info = "driver";
        params_from_layout([&](size_t i, size_t *o, size_t *z) { return s.driver.funcGetParamInfo(l.function, i, o, z); },
                           l.kernel_params, l.extra, *p);
        size_t probe_offset = 0, probe_size = 0;
        if (p->params.empty() && s.driver.kernelGetParamInfo != nullptr &&
            s.driver.kernelGetParamInfo(reinterpret_cast<CUkernel>(l.function), 0, &probe_offset, &probe_size) == CUDA_SUCCESS) {
            // the runtime launches a library's CUkernel through cuLaunchKernel as a CUfunction, which
            // cuFuncGetParamInfo does not know: the kernel's own layout query does
            p->param_info = "kernel";
            params_from_layout([&](size_t i, size_t *o, size_t *z) {
                return s.driver.kernelGetParamInfo(reinterpret_cast<CUkernel>(l.function), i, o, z);
            }, l.kernel_params, l.extra, *p);
        }
    } else if (l.kernel != nullptr && s.driver.kernelGetParamInfo != nullptr) {
        p->param_info = "kernel";
        params_from_layout([&](size_t i, size_t *o, size_t *z) { return s.driver.kernelGetParamInfo(l.kernel, i, o, z); },
                           l.kernel_params, nullptr, *p);
    } else {
        std::vector<size_t> sizes;
        if (l.kernel_params != nullptr && sizes_from_signature(demangled, sizes)) {
            p->param_info = "signature";
            params_from_sizes(sizes, l.kernel_params, *p);
        } else {
            p->param_info = "none";
            p->notes.push_back("the parameter layout is unknown (a struct parameter on the cudaLaunchKernel path)");
        }
    }
    find_allocations(s, *p);
    if (s.config.data) {
        take_before(s, *p);
    }
    emit(s, *p, "enter");
    *info->correlationData = reinterpret_cast<uint64_t>(p);
}

void on_exit(State &s, CUpti_CallbackDomain domain, const CUpti_CallbackData *info) {
    auto *p = reinterpret_cast<Pending *>(*info->correlationData);
    *info->correlationData = 0;
    std::lock_guard<std::mutex> lock(s.mutex);
    int returned = 0;  // the launch call's own result: an error means the kernel never ran
    if (info->functionReturnValue != nullptr) {
        returned = domain == CUPTI_CB_DOMAIN_DRIVER_API ? static_cast<int>(*static_cast<CUresult *>(info->functionReturnValue))
                                                        : static_cast<int>(*static_cast<cudaError_t *>(info->functionReturnValue));
    }
    if (returned != 0) {
        p->error = std::string("the launch call returned error ") + std::to_string(returned) +
                   (domain == CUPTI_CB_DOMAIN_DRIVER_API ? " (" + cu_error(s, static_cast<CUresult>(returned)) + ")" : "");
    } else if (s.config.data && !p->capturing) {
        take_after(s, *p);
    }
    emit(s, *p, "exit");
    delete p;
}

// Makes the launch's context current on this thread while the library works, when none is (the
// runtime may call before it made its primary context current); restores the thread's state.
class ContextGuard {
public:
    ContextGuard(State &s, CUcontext context) : s_(s) {
        CUcontext current = nullptr;
        if (context != nullptr && s.driver.ctxGetCurrent != nullptr && s.driver.ctxPushCurrent != nullptr &&
            s.driver.ctxGetCurrent(&current) == CUDA_SUCCESS && current == nullptr) {
            pushed_ = s.driver.ctxPushCurrent(context) == CUDA_SUCCESS;
        }
    }
    ~ContextGuard() {
        CUcontext popped = nullptr;
        if (pushed_ && s_.driver.ctxPopCurrent != nullptr) {
            s_.driver.ctxPopCurrent(&popped);
        }
    }
    ContextGuard(const ContextGuard &) = delete;
    ContextGuard &operator=(const ContextGuard &) = delete;

private:
    State &s_;
    bool pushed_ = false;
};

// correlationData between a call's enter and exit callbacks: 0 not counted (not a launch we
// decode, or nested inside one), kCounted a launch not recorded (filtered, over --launches), else
// the Pending record.
constexpr uint64_t kCounted = 1;
constexpr uint64_t kDeferred = 2;  // a legacy runtime launch left to its nested driver launch

void CUPTIAPI callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data) {
    auto *s = static_cast<State *>(userdata);
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) {
        return;
    }
    const auto *info = static_cast<const CUpti_CallbackData *>(data);
    if (info->callbackSite == CUPTI_API_ENTER) {
        *info->correlationData = 0;
        // A launch inside another launch call of this thread (the runtime calling the driver) is
        // the same launch: the outermost call that could be decoded records it.
        if (t_depth > 0) {
            return;
        }
        Launch launch;
        if (info->functionParams == nullptr || !decode(domain, cbid, info, launch)) {
            return;  // a nested driver call, if any, records it
        }
        if (launch.legacy_runtime && !t_deferred) {
            ContextGuard guard(*s, info->context);
            if (!layout_known(*s, launch, info)) {
                t_deferred = true;
                t_deferred_taken = false;
                *info->correlationData = kDeferred;
                return;
            }
        } else if (t_deferred) {
            t_deferred_taken = true;  // the nested driver launch records the deferred one
        }
        t_depth++;
        *info->correlationData = kCounted;
        ContextGuard guard(*s, info->context);
        on_enter(*s, launch, info);
        return;
    }
    uint64_t correlation = *info->correlationData;
    if (correlation == 0) {
        return;
    }
    if (correlation == kDeferred) {
        bool taken = t_deferred_taken;
        t_deferred = false;
        t_deferred_taken = false;
        Launch launch;
        if (taken || !decode(domain, cbid, info, launch)) {
            return;
        }
        // no driver launch was reported inside it: recorded now, its parameters as unknown bytes
        ContextGuard guard(*s, info->context);
        *info->correlationData = 0;
        on_enter(*s, launch, info);
        if (*info->correlationData > kDeferred) {
            on_exit(*s, domain, info);
        }
        return;
    }
    t_depth--;
    if (correlation == kCounted) {
        return;
    }
    ContextGuard guard(*s, info->context);
    on_exit(*s, domain, info);
}

void write_counts() {
    State *s = g_state;
    if (s == nullptr) {
        return;
    }
    // another thread may be inside a launch callback as the program exits: never wait for it
    std::unique_lock<std::mutex> lock(s->mutex, std::try_to_lock);
    if (!lock.owns_lock()) {
        return;
    }
    std::string text = "{\"seen\": {";
    bool first = true;
    for (const auto &entry : s->seen) {
        text += (first ? "" : ", ") + json_string(entry.first) + ": " + std::to_string(entry.second);
        first = false;
    }
    text += "}, \"snapshot_bytes\": " + std::to_string(s->snapshot_bytes) + "}\n";
    write_file(s->config.dir + "/counts.json", text);
    if (s->launches != nullptr) {
        std::fflush(s->launches);
    }
}

template <typename T>
void load(void *handle, T &slot, const char *name) {
    slot = reinterpret_cast<T>(dlsym(handle, name));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    if (g_state != nullptr) {
        return 1;
    }
    const char *dir = std::getenv("REGRAPHT_CAPTURE_DIR");
    if (dir == nullptr || *dir == '\0') {
        std::fprintf(stderr, "regrapht capture: REGRAPHT_CAPTURE_DIR is not set; nothing is captured\n");
        return 1;
    }
    // The first process of the program to initialise CUDA records; a CUDA program it starts (which
    // inherits CUDA_INJECTION64_PATH) must not write into the same files.
    std::string owner = std::string(dir) + "/owner.pid";
    int claim = open(owner.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (claim < 0) {
        return 1;
    }
    std::string pid = std::to_string(getpid()) + "\n";
    if (write(claim, pid.data(), pid.size()) < 0) {
        std::fprintf(stderr, "regrapht capture: cannot write %s\n", owner.c_str());
    }
    close(claim);
    auto *s = new State();
    s->config.dir = dir;
    const char *filter = std::getenv("REGRAPHT_CAPTURE_KERNEL");
    if (filter != nullptr && *filter != '\0') {
        try {
            s->config.filter = std::regex(filter, std::regex::ECMAScript);
            s->config.has_filter = true;
        } catch (const std::regex_error &error) {
            write_status(dir, "failed", std::string("the kernel filter is not a valid regular expression: ") + error.what(), 0);
            return 1;
        }
    }
    s->config.per_kernel = static_cast<long>(env_number("REGRAPHT_CAPTURE_LAUNCHES", 3));
    const char *data = std::getenv("REGRAPHT_CAPTURE_DATA");
    s->config.data = data != nullptr && std::strcmp(data, "1") == 0;
    s->config.max_bytes = env_number("REGRAPHT_CAPTURE_MAX_BYTES", s->config.max_bytes);
    s->config.total_bytes = env_number("REGRAPHT_CAPTURE_TOTAL_BYTES", s->config.total_bytes);

    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda == nullptr) {
        cuda = dlopen("libcuda.so.1", RTLD_NOW);
    }
    if (cuda == nullptr) {
        write_status(dir, "failed", std::string("cannot open the CUDA driver libcuda.so.1: ") + dlerror(), 0);
        return 1;
    }
    Driver &d = s->driver;
    load(cuda, d.memGetAddressRange, RG_XSTR(cuMemGetAddressRange));
    load(cuda, d.pointerGetAttribute, RG_XSTR(cuPointerGetAttribute));
    load(cuda, d.funcGetParamInfo, RG_XSTR(cuFuncGetParamInfo));
    load(cuda, d.kernelGetParamInfo, RG_XSTR(cuKernelGetParamInfo));
    load(cuda, d.funcGetName, RG_XSTR(cuFuncGetName));
    load(cuda, d.kernelGetName, RG_XSTR(cuKernelGetName));
    load(cuda, d.ctxSynchronize, RG_XSTR(cuCtxSynchronize));
    load(cuda, d.streamSynchronize, RG_XSTR(cuStreamSynchronize));
    load(cuda, d.ctxGetDevice, RG_XSTR(cuCtxGetDevice));
    load(cuda, d.ctxGetCurrent, RG_XSTR(cuCtxGetCurrent));
    load(cuda, d.ctxPushCurrent, RG_XSTR(cuCtxPushCurrent));
    load(cuda, d.ctxPopCurrent, RG_XSTR(cuCtxPopCurrent));
    load(cuda, d.memcpyDtoH, RG_XSTR(cuMemcpyDtoH));
    load(cuda, d.streamIsCapturing, RG_XSTR(cuStreamIsCapturing));
    load(cuda, d.getErrorName, RG_XSTR(cuGetErrorName));
    if (d.ctxSynchronize == nullptr || d.memcpyDtoH == nullptr || d.memGetAddressRange == nullptr) {
        write_status(dir, "failed", "the CUDA driver lacks cuCtxSynchronize, cuMemcpyDtoH or cuMemGetAddressRange", 0);
        return 1;
    }

    const char *cupti_path = std::getenv("REGRAPHT_CAPTURE_CUPTI");
    void *cupti = dlopen(cupti_path != nullptr && *cupti_path ? cupti_path : "libcupti.so", RTLD_NOW | RTLD_LOCAL);
    if (cupti == nullptr) {
        write_status(dir, "failed", std::string("cannot load CUPTI: ") + dlerror(), 0);
        return 1;
    }
    load(cupti, s->cupti.subscribe, "cuptiSubscribe");
    load(cupti, s->cupti.enableCallback, "cuptiEnableCallback");
    load(cupti, s->cupti.getResultString, "cuptiGetResultString");
    if (s->cupti.subscribe == nullptr || s->cupti.enableCallback == nullptr) {
        write_status(dir, "failed", "the CUPTI library lacks cuptiSubscribe/cuptiEnableCallback", 0);
        return 1;
    }
    std::string launches = std::string(dir) + "/launches.jsonl";
    s->launches = std::fopen(launches.c_str(), "a");
    if (s->launches == nullptr) {
        write_status(dir, "failed", "cannot open " + launches + ": " + std::strerror(errno), 0);
        return 1;
    }
    CUptiResult result = s->cupti.subscribe(&s->subscriber, reinterpret_cast<CUpti_CallbackFunc>(callback), s);
    if (result != CUPTI_SUCCESS) {
        const char *text = nullptr;
        if (s->cupti.getResultString != nullptr) s->cupti.getResultString(result, &text);
        std::string message = std::string("cuptiSubscribe failed: ") + (text ? text : "unknown error");
        if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
            message += " (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the driver does not allow profiling for this user)";
        } else if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
            message += " (another profiling tool is attached to this process)";
        }
        write_status(dir, "failed", message, static_cast<int>(result));
        return 1;
    }
    struct Wanted {
        CUpti_CallbackDomain domain;
        CUpti_CallbackId cbid;
    };
    const Wanted wanted[] = {
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000},
    };
    for (const Wanted &w : wanted) {
        result = s->cupti.enableCallback(1, s->subscriber, w.domain, w.cbid);
        if (result != CUPTI_SUCCESS) {
            const char *text = nullptr;
            if (s->cupti.getResultString != nullptr) s->cupti.getResultString(result, &text);
            write_status(dir, "failed", std::string("cuptiEnableCallback failed: ") + (text ? text : "unknown error"),
                         static_cast<int>(result));
            return 1;
        }
    }
    g_state = s;
    std::atexit(write_counts);
    write_status(dir, "capturing", "", 0);
    return 1;
}
