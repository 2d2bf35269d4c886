// The linker (cuLinkCreate ... cuLinkDestroy): each input is copied into the
// state (as the driver reads its inputs during the call). A link of one
// cubin, PTX or fat binary completes to that image, which cuModuleLoadData
// takes as it is (the vGPU's driver compiles PTX and picks a fat binary's
// code at load); linking several images, or an object or library, is not
// offered (CUDA_ERROR_NOT_SUPPORTED at cuLinkComplete).
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"
#include "guest-stub/platform/platform.h"

using namespace guest::cuda;

namespace {

constexpr int kInputsPerLink = 8;
constexpr int kLinks = 16;
constexpr size_t kMaxInputBytes = 256ull << 20; // as cuModuleLoadData's images

struct LinkState {
    bool used;
    int inputs;
    CUjitInputType type[kInputsPerLink];
    void* data[kInputsPerLink]; // page-locked copies (cuMemAllocHost)
    size_t bytes[kInputsPerLink];
};
LinkState g_links[kLinks];

LinkState* link_of(CUlinkState handle)
{
    for (LinkState& l : g_links)
        if (l.used && reinterpret_cast<CUlinkState>(&l) == handle)
            return &l;
    return nullptr;
}

// The JIT options the driver writes back read as an empty log, as
// cuModuleLoadDataEx answers them.
CUresult answer_options(unsigned n, CUjit_option* options, void** values)
{
    if (n > 0 && (options == nullptr || values == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; ++i)
        if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES || options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            values[i] = nullptr;
        else if (options[i] == CU_JIT_WALL_TIME)
            *reinterpret_cast<float*>(&values[i]) = 0.0f;
    return CUDA_SUCCESS;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuLinkCreate, 6050);
extern "C" CUresult cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues,
                                 CUlinkState* stateOut)
{
    GUEST_API_LOCK();
    if (stateOut == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    if (CUresult r = answer_options(numOptions, options, optionValues))
        return r;
    for (LinkState& l : g_links)
        if (!l.used) {
            l = LinkState{};
            l.used = true;
            *stateOut = reinterpret_cast<CUlinkState>(&l);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

KVMGPU_DRIVER_ENTRY(cuLinkAddData, 6050);
extern "C" CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char*,
                                  unsigned int numOptions, CUjit_option* options, void** optionValues)
{
    GUEST_API_LOCK();
    LinkState* l = link_of(state);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (data == nullptr || size == 0 || size > kMaxInputBytes || type < CU_JIT_INPUT_CUBIN || type >= CU_JIT_NUM_INPUT_TYPES)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = answer_options(numOptions, options, optionValues))
        return r;
    if (l->inputs == kInputsPerLink)
        return CUDA_ERROR_OUT_OF_MEMORY;
    void* copy = nullptr;
    if (CUresult r = cuMemAllocHost(&copy, size + 1)) // + a NUL: PTX text ends there whatever the size said
        return r;
    memcpy(copy, data, size);
    static_cast<uint8_t*>(copy)[size] = 0;
    l->type[l->inputs] = type;
    l->data[l->inputs] = copy;
    l->bytes[l->inputs] = size;
    ++l->inputs;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuLinkAddFile, 6050);
extern "C" CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                                  CUjit_option* options, void** optionValues)
{
    GUEST_API_LOCK();
    if (link_of(state) == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (path == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    void* image = nullptr;
    size_t bytes = 0;
    switch (guest::platform::read_file(path, &image, &bytes)) {
    case guest::platform::FileResult::kOk: break;
    case guest::platform::FileResult::kNotFound: return CUDA_ERROR_FILE_NOT_FOUND;
    case guest::platform::FileResult::kNoFiles: return CUDA_ERROR_NOT_SUPPORTED;
    case guest::platform::FileResult::kNoMemory: return CUDA_ERROR_OUT_OF_MEMORY;
    case guest::platform::FileResult::kReadError: return CUDA_ERROR_INVALID_VALUE;
    }
    const CUresult r = cuLinkAddData(state, type, image, bytes, path, numOptions, options, optionValues);
    guest::platform::release_file(image);
    return r;
}

KVMGPU_DRIVER_ENTRY(cuLinkComplete, 5050);
extern "C" CUresult cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut)
{
    GUEST_API_LOCK();
    LinkState* l = link_of(state);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (cubinOut == nullptr || sizeOut == nullptr || l->inputs == 0)
        return CUDA_ERROR_INVALID_VALUE;
    const CUjitInputType t = l->type[0];
    if (l->inputs > 1 || (t != CU_JIT_INPUT_CUBIN && t != CU_JIT_INPUT_PTX && t != CU_JIT_INPUT_FATBINARY))
        return CUDA_ERROR_NOT_SUPPORTED;
    *cubinOut = l->data[0]; // valid until cuLinkDestroy, as the driver's output
    *sizeOut = l->bytes[0];
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuLinkDestroy, 5050);
extern "C" CUresult cuLinkDestroy(CUlinkState state)
{
    GUEST_API_LOCK();
    LinkState* l = link_of(state);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < l->inputs; ++i)
        cuMemFreeHost(l->data[i]);
    *l = LinkState{};
    return CUDA_SUCCESS;
}
