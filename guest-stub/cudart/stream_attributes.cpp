// cudaStreamSetAttribute / cudaStreamGetAttribute. Each attribute offered
// is a hint the driver may act on or not, so the runtime checks the value,
// keeps it for the Get, and sends nothing to the vGPU:
//   * the access policy window (persisting L2 lines: the VMM never sets L2
//     aside, see cudaDeviceSetLimit's cudaLimitPersistingL2CacheSize);
//   * the synchronization policy (how a host thread waits: the guest
//     always polls its ring);
//   * the priority (the range offered is [0, 0]: kept as 0).
// Others: cudaErrorNotSupported. A stream never set reads the defaults
// (an empty window, cudaSyncPolicyAuto, priority 0).
#include <stdlib.h>
#include <string.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

struct StreamAttributes {
    cudaStream_t stream;
    cudaAccessPolicyWindow window;
    cudaSynchronizationPolicy sync_policy;
    StreamAttributes* next;
};
StreamAttributes* g_attributes = nullptr;

StreamAttributes* find(cudaStream_t s)
{
    for (StreamAttributes* a = g_attributes; a != nullptr; a = a->next)
        if (a->stream == s)
            return a;
    return nullptr;
}

bool window_ok(const cudaAccessPolicyWindow& w)
{
    if (!(w.hitRatio >= 0.0f && w.hitRatio <= 1.0f)) // also refuses NaN
        return false;
    if (w.hitProp < cudaAccessPropertyNormal || w.hitProp > cudaAccessPropertyPersisting)
        return false;
    return w.missProp == cudaAccessPropertyNormal || w.missProp == cudaAccessPropertyStreaming;
}

} // namespace

namespace guest::cudart {

void forget_stream_attributes(cudaStream_t s)
{
    for (StreamAttributes** link = &g_attributes; *link != nullptr; link = &(*link)->next) {
        if ((*link)->stream == s) {
            StreamAttributes* a = *link;
            *link = a->next;
            free(a);
            return;
        }
    }
}

} // namespace guest::cudart

extern "C" {

cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID attr, const cudaStreamAttrValue* value)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    int priority = 0;
    if (CUresult r = cuStreamGetPriority(s, &priority)) // checks the handle
        return record(r);
    if (attr == cudaLaunchAttributePriority)
        return cudaSuccess; // clamped to the range [0, 0]
    if (attr == cudaLaunchAttributeAccessPolicyWindow && !window_ok(value->accessPolicyWindow))
        return record(cudaErrorInvalidValue);
    if (attr == cudaLaunchAttributeSynchronizationPolicy &&
        (value->syncPolicy < cudaSyncPolicyAuto || value->syncPolicy > cudaSyncPolicyBlockingSync))
        return record(cudaErrorInvalidValue);
    if (attr != cudaLaunchAttributeAccessPolicyWindow && attr != cudaLaunchAttributeSynchronizationPolicy)
        return record(cudaErrorNotSupported);
    StreamAttributes* a = find(s);
    if (a == nullptr) {
        a = static_cast<StreamAttributes*>(calloc(1, sizeof *a));
        if (a == nullptr)
            return record(cudaErrorMemoryAllocation);
        a->stream = s;
        a->sync_policy = cudaSyncPolicyAuto;
        a->next = g_attributes;
        g_attributes = a;
    }
    if (attr == cudaLaunchAttributeAccessPolicyWindow)
        a->window = value->accessPolicyWindow;
    else
        a->sync_policy = value->syncPolicy;
    return cudaSuccess;
}

cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID attr, cudaStreamAttrValue* value)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    int priority = 0;
    if (CUresult r = cuStreamGetPriority(s, &priority))
        return record(r);
    const StreamAttributes* a = find(s);
    memset(value, 0, sizeof *value);
    if (attr == cudaLaunchAttributePriority)
        value->priority = priority;
    else if (attr == cudaLaunchAttributeAccessPolicyWindow)
        value->accessPolicyWindow = a != nullptr ? a->window : cudaAccessPolicyWindow{};
    else if (attr == cudaLaunchAttributeSynchronizationPolicy)
        value->syncPolicy = a != nullptr ? a->sync_policy : cudaSyncPolicyAuto;
    else
        return record(cudaErrorNotSupported);
    return cudaSuccess;
}

} // extern "C"
