// A stand-in for libcupti.so (CPU tests of the capture library): keeps the subscriber's callback
// and lets the fake program call it as CUPTI would around a launch. FAKE_CUPTI_DENY=1 answers
// cuptiSubscribe with CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, as a driver that restricts profiling.
#include <cupti.h>

#include <cstdlib>
#include <cstring>

namespace {
CUpti_CallbackFunc g_callback = nullptr;
void *g_userdata = nullptr;
int g_enabled = 0;
int g_result = 0;  // what the next calls "return" (CUresult or cudaError_t: both int-sized)
}  // namespace

extern "C" {
CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata) {
    const char *deny = std::getenv("FAKE_CUPTI_DENY");
    if (deny != nullptr && std::strcmp(deny, "1") == 0) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    g_callback = callback;
    g_userdata = userdata;
    *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&g_callback);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                         CUpti_CallbackId) {
    g_enabled += enable ? 1 : 0;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **text) {
    *text = result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" : "fake CUPTI error";
    return CUPTI_SUCCESS;
}

int fake_cupti_enabled(void) { return g_enabled; }

void fake_cupti_set_result(int result) { g_result = result; }

void fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                     const char *symbol, const void *params, uint64_t *correlation) {
    if (g_callback == nullptr) return;
    CUpti_CallbackData data;
    std::memset(&data, 0, sizeof data);
    data.callbackSite = site;
    data.functionName = "fake";
    data.functionParams = params;
    data.symbolName = symbol;
    data.context = reinterpret_cast<CUcontext>(1);
    data.correlationData = correlation;
    data.functionReturnValue = &g_result;
    g_callback(g_userdata, domain, cbid, &data);
}
}
