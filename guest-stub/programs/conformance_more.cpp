// conformance, continued: the calls NVIDIA's libraries need beyond the
// basics (issue 42), on both backends: pitched allocations, address ranges,
// 2-D memsets, parameter info, stream memory operations, the linker,
// libraries and kernels, and the shareable handles a VM refuses.
#include <string.h>

#include "guest-stub/kernels/kernels_image.h"
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

void pitched_memory_and_2d_memsets()
{
    CUdeviceptr d = 0;
    size_t pitch = 0;
    expect("cuMemAllocPitch", cuMemAllocPitch(&d, &pitch, 100, 6, 4), CUDA_SUCCESS);
    expect_true("cuMemAllocPitch: the row rounded up to 512 bytes", pitch == 512);
    expect("cuMemAllocPitch(element 3)", cuMemAllocPitch(&d, &pitch, 100, 6, 3), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAllocPitch(no height)", cuMemAllocPitch(&d, &pitch, 100, 0, 4), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemFree(0): nothing to free", cuMemFree(0), CUDA_SUCCESS);
    expect("cuMemFreeAsync(0): nothing to free", cuMemFreeAsync(0, 0), CUDA_SUCCESS);
    expect("cuMemFreeHost(nullptr): nothing to free", cuMemFreeHost(nullptr), CUDA_SUCCESS);
    CUdeviceptr base = 0;
    size_t bytes = 0;
    expect("cuMemGetAddressRange", cuMemGetAddressRange(&base, &bytes, d + 700), CUDA_SUCCESS);
    expect_true("cuMemGetAddressRange: the pitched allocation", base == d && bytes == 512 * 6);
    expect("cuMemGetAddressRange(size only)", cuMemGetAddressRange(nullptr, &bytes, d), CUDA_SUCCESS);
    expect("cuMemGetAddressRange(unknown)", cuMemGetAddressRange(&base, &bytes, 0x1000), CUDA_ERROR_NOT_FOUND);
    // A buffer id names one allocation for the process's life: another
    // allocation, even one at a freed allocation's address, gets a new one.
    unsigned long long id = 0, other_id = 0, again_id = 0;
    CUdeviceptr other = 0;
    expect("cuPointerGetAttribute(BUFFER_ID)", cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d + 700),
           CUDA_SUCCESS);
    CU_CHECK(cuMemAlloc(&other, 256));
    CU_CHECK(cuPointerGetAttribute(&other_id, CU_POINTER_ATTRIBUTE_BUFFER_ID, other));
    CU_CHECK(cuMemFree(other));
    CU_CHECK(cuMemAlloc(&other, 256));
    CU_CHECK(cuPointerGetAttribute(&again_id, CU_POINTER_ATTRIBUTE_BUFFER_ID, other));
    CU_CHECK(cuMemFree(other));
    expect_true("BUFFER_ID: one per allocation, never reused",
                id != 0 && other_id != 0 && again_id != 0 && id != other_id && again_id != other_id && again_id != id);

    // Rows 1..4 of 25 u32s (100 bytes) in a zeroed allocation; then one u16
    // and one byte row by the other two forms, the last queued on a stream.
    CU_CHECK(cuMemsetD8(d, 0, 512 * 6));
    expect("cuMemsetD2D32", cuMemsetD2D32(d + 512, 512, 0x01020304u, 25, 4), CUDA_SUCCESS);
    expect("cuMemsetD2D16", cuMemsetD2D16(d + 200, 512, 0xA5A5, 2, 1), CUDA_SUCCESS);
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, 0));
    expect("cuMemsetD2D8Async", cuMemsetD2D8Async(d + 5 * 512, 512, 0x7F, 3, 1, s), CUDA_SUCCESS);
    expect("cuMemsetD2D16Async", cuMemsetD2D16Async(d + 5 * 512 + 8, 512, 0x1111, 1, 1, s), CUDA_SUCCESS);
    expect("cuMemsetD2D32Async", cuMemsetD2D32Async(d + 5 * 512 + 12, 512, 0x22222222u, 1, 1, s), CUDA_SUCCESS);
    CU_CHECK(cuStreamSynchronize(s));
    static uint8_t host[512 * 6];
    CU_CHECK(cuMemcpyDtoH(host, d, sizeof host));
    bool right = true;
    for (size_t i = 0; i < sizeof host; ++i) {
        const size_t row = i / 512, col = i % 512;
        uint8_t want = 0;
        if (row >= 1 && row <= 4 && col < 100)
            want = static_cast<uint8_t>(0x01020304u >> (8 * (col % 4)));
        if (row == 0 && col >= 200 && col < 204)
            want = 0xA5;
        if (row == 5 && col < 3)
            want = 0x7F;
        if (row == 5 && (col == 8 || col == 9))
            want = 0x11;
        if (row == 5 && col >= 12 && col < 16)
            want = 0x22;
        right = right && host[i] == want;
    }
    expect_true("2-D memsets: each row's elements set, nothing between", right);
    expect("cuMemsetD2D32(pitch below the row)", cuMemsetD2D32(d, 64, 0, 25, 2), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD2D32(misaligned pitch)", cuMemsetD2D32(d, 510, 0, 2, 2), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD2D8(past the allocation)", cuMemsetD2D8(d, 512, 0, 100, 7), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD2D8(nothing to set)", cuMemsetD2D8(d, 512, 0, 0, 7), CUDA_SUCCESS);

    // Stream memory operations: writes land in order; a wait already met passes.
    expect("cuStreamWriteValue32", cuStreamWriteValue32(s, d, 0xCAFEF00Du, 0), CUDA_SUCCESS);
    // Flags 0: NVIDIA's driver 580 on an H100 refuses NO_MEMORY_BARRIER on a 64-bit write
    // (CUDA_ERROR_INVALID_VALUE), and the wait below would then never be met.
    expect("cuStreamWriteValue64", cuStreamWriteValue64(s, d + 8, 0x0102030405060708ull, 0), CUDA_SUCCESS);
    expect("cuStreamWaitValue32(met)", cuStreamWaitValue32(s, d, 0xCAFEF00Du, CU_STREAM_WAIT_VALUE_EQ), CUDA_SUCCESS);
    expect("cuStreamWaitValue64(met)", cuStreamWaitValue64(s, d + 8, 1, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS);
    expect("cuStreamSynchronize after the stream values", cuStreamSynchronize(s), CUDA_SUCCESS);
    static uint32_t word; // in the image's data, as the buffers above: copies land in guest RAM the
    static uint64_t wide; // device can reach, not on the boot stack
    CU_CHECK(cuMemcpyDtoH(&word, d, 4));
    CU_CHECK(cuMemcpyDtoH(&wide, d + 8, 8));
    expect_true("stream values written", word == 0xCAFEF00Du && wide == 0x0102030405060708ull);
    expect("cuStreamWriteValue32(misaligned)", cuStreamWriteValue32(s, d + 2, 1, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamWriteValue64(misaligned)", cuStreamWriteValue64(s, d + 4, 1, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamWaitValue32(unknown flags)", cuStreamWaitValue32(s, d, 1, 0x10), CUDA_ERROR_INVALID_VALUE);

    // The same as one batch: a write, a flush, a wait on the write, a 64-bit write.
    CUstreamBatchMemOpParams ops[4] = {};
    ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    ops[0].writeValue.address = d + 16;
    ops[0].writeValue.value = 0x5151u;
    ops[1].flushRemoteWrites.operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
    ops[2].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    ops[2].waitValue.address = d + 16;
    ops[2].waitValue.value = 0x5151u;
    ops[2].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
    ops[3].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    ops[3].writeValue.address = d + 24;
    ops[3].writeValue.value64 = 0x1122334455667788ull;
    expect("cuStreamBatchMemOp", cuStreamBatchMemOp(s, 4, ops, 0), CUDA_SUCCESS);
    CU_CHECK(cuMemcpyDtoH(&word, d + 16, 4));
    CU_CHECK(cuMemcpyDtoH(&wide, d + 24, 8));
    expect_true("batched stream values written", word == 0x5151u && wide == 0x1122334455667788ull);
    expect("cuStreamBatchMemOp(flags)", cuStreamBatchMemOp(s, 1, ops, 1), CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamBatchMemOp(none)", cuStreamBatchMemOp(s, 0, ops, 0), CUDA_ERROR_INVALID_VALUE);
    ops[1].operation = static_cast<CUstreamBatchMemOpType>(99);
    expect("cuStreamBatchMemOp(unknown operation)", cuStreamBatchMemOp(s, 2, ops, 0), CUDA_ERROR_INVALID_VALUE);

    // A stream's context: the one it was made in; the default stream's: the current one.
    CUcontext ctx = nullptr, current = nullptr;
    CU_CHECK(cuCtxGetCurrent(&current));
    expect("cuStreamGetCtx", cuStreamGetCtx(s, &ctx), CUDA_SUCCESS);
    expect_true("a stream's context is the one it was made in", ctx == current && ctx != nullptr);
    ctx = nullptr;
    expect("cuStreamGetCtx(default stream)", cuStreamGetCtx(nullptr, &ctx), CUDA_SUCCESS);
    expect_true("the default stream's context is the current one", ctx == current);
    CUgreenCtx green = reinterpret_cast<CUgreenCtx>(1);
    expect("cuStreamGetCtx_v2", cuStreamGetCtx_v2(s, &ctx, &green), CUDA_SUCCESS);
    expect_true("no green context", green == nullptr && ctx == current);

    // Stream ids: unique in the process; every name of the default stream has one.
    CUstream s2 = nullptr;
    CU_CHECK(cuStreamCreate(&s2, 0));
    unsigned long long id1 = 0, id2 = 0, id_default = 0, id_legacy = 0;
    expect("cuStreamGetId", cuStreamGetId(s, &id1), CUDA_SUCCESS);
    expect("cuStreamGetId(another stream)", cuStreamGetId(s2, &id2), CUDA_SUCCESS);
    expect("cuStreamGetId(default stream)", cuStreamGetId(nullptr, &id_default), CUDA_SUCCESS);
    expect("cuStreamGetId(CU_STREAM_LEGACY)", cuStreamGetId(CU_STREAM_LEGACY, &id_legacy), CUDA_SUCCESS);
    expect_true("streams' ids differ", id1 != 0 && id2 != 0 && id1 != id2 && id1 != id_default && id2 != id_default);
    expect_true("the default stream has one id", id_default == id_legacy);
    expect("cuStreamGetId(null id)", cuStreamGetId(s, nullptr), CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuStreamDestroy(s2));
    expect("cuStreamGetId(destroyed)", cuStreamGetId(s2, &id2), CUDA_ERROR_INVALID_HANDLE);

    CU_CHECK(cuStreamDestroy(s));
    expect("cuStreamGetCtx(destroyed)", cuStreamGetCtx(s, &ctx), CUDA_ERROR_INVALID_HANDLE);
    CU_CHECK(cuMemFree(d));
}

void parameters_libraries_and_links(CUfunction add)
{
    size_t offset = 1, size = 0;
    expect("cuFuncGetParamInfo(vector_add, 3)", cuFuncGetParamInfo(add, 3, &offset, &size), CUDA_SUCCESS);
    expect_true("cuFuncGetParamInfo: the unsigned after three pointers", offset == 24 && size == 4);
    expect("cuFuncGetParamInfo(past the last)", cuFuncGetParamInfo(add, 4, &offset, &size), CUDA_ERROR_INVALID_VALUE);
    expect("cuFuncGetParamInfo(bogus)", cuFuncGetParamInfo(bogus(add), 0, &offset, &size),
           CUDA_ERROR_INVALID_HANDLE);

    CUlibrary lib = nullptr;
    expect("cuLibraryLoadData", cuLibraryLoadData(&lib, kvmgpu_kernels_image, nullptr, nullptr, 0, nullptr, nullptr, 0),
           CUDA_SUCCESS);
    CUkernel kernel = nullptr;
    CUfunction fn = nullptr;
    CUmodule mod = nullptr;
    expect("cuLibraryGetKernel", cuLibraryGetKernel(&kernel, lib, "vector_add"), CUDA_SUCCESS);
    expect("cuLibraryGetKernel(unknown)", cuLibraryGetKernel(&kernel, lib, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
    expect("cuKernelGetFunction", cuKernelGetFunction(&fn, kernel), CUDA_SUCCESS);
    expect("cuLibraryGetModule", cuLibraryGetModule(&mod, lib), CUDA_SUCCESS);
    CUfunction same = nullptr;
    expect("cuModuleGetFunction(the library's module)", cuModuleGetFunction(&same, mod, "vector_add"), CUDA_SUCCESS);
    expect_true("a kernel's function is its module's", fn == same && fn != nullptr);
    expect("cuFuncGetParamInfo(a kernel's function)", cuFuncGetParamInfo(fn, 0, &offset, &size), CUDA_SUCCESS);
    // Enumeration: the module's kernels, vector_add's handle among them; the library's the same.
    unsigned count = 0;
    expect("cuModuleGetFunctionCount", cuModuleGetFunctionCount(&count, mod), CUDA_SUCCESS);
    CUfunction listed[64] = {};
    const unsigned room = count < 64 ? count : 64;
    expect("cuModuleEnumerateFunctions", cuModuleEnumerateFunctions(listed, room, mod), CUDA_SUCCESS);
    bool found = false;
    for (unsigned i = 0; i < room; ++i)
        found = found || listed[i] == fn;
    expect_true("the module's kernels include vector_add", count > 1 && found);
    unsigned kernels = 0;
    expect("cuLibraryGetKernelCount", cuLibraryGetKernelCount(&kernels, lib), CUDA_SUCCESS);
    expect_true("a library has its module's kernels", kernels == count);
    CUkernel first = nullptr;
    expect("cuLibraryEnumerateKernels(one)", cuLibraryEnumerateKernels(&first, 1, lib), CUDA_SUCCESS);
    expect_true("a library's first kernel is its module's", reinterpret_cast<CUfunction>(first) == listed[0]);
    expect("cuModuleGetFunctionCount(null)", cuModuleGetFunctionCount(nullptr, mod), CUDA_ERROR_INVALID_VALUE);
    expect("cuModuleGetFunctionCount(bogus)", cuModuleGetFunctionCount(&count, reinterpret_cast<CUmodule>(bogus(reinterpret_cast<CUfunction>(mod)))),
           CUDA_ERROR_INVALID_HANDLE);
    CUlibrary owner = nullptr;
    expect("cuKernelGetLibrary", cuKernelGetLibrary(&owner, kernel), CUDA_SUCCESS);
    expect_true("a kernel's library is the one it came from", owner == lib);
    expect("cuKernelGetLibrary(a module's function)", cuKernelGetLibrary(&owner, reinterpret_cast<CUkernel>(add)),
           CUDA_ERROR_INVALID_HANDLE);
    // Context-independent: a thread with no current context looks kernels up
    // too (NVIDIA's cudart does on a new thread before setting its context).
    CUcontext was = nullptr;
    expect("cuCtxPopCurrent (no context for the look-up)", cuCtxPopCurrent(&was), CUDA_SUCCESS);
    CUkernel contextless = nullptr;
    expect("cuLibraryGetKernel(no current context)", cuLibraryGetKernel(&contextless, lib, "vector_add"), CUDA_SUCCESS);
    expect_true("the same kernel with no current context", contextless == kernel);
    expect("cuCtxPushCurrent (back)", cuCtxPushCurrent(was), CUDA_SUCCESS);
    expect("cuLibraryUnload", cuLibraryUnload(lib), CUDA_SUCCESS);
    expect("cuLibraryUnload(again)", cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
    expect("cuLibraryGetModule(unloaded)", cuLibraryGetModule(&mod, lib), CUDA_ERROR_INVALID_HANDLE);
    // A flag option with no values, as cuBLASLt loads its kernels; an unknown option is refused.
    CUlibraryOption preserved = CU_LIBRARY_BINARY_IS_PRESERVED;
    expect("cuLibraryLoadData(BINARY_IS_PRESERVED, no values)",
           cuLibraryLoadData(&lib, kvmgpu_kernels_image, nullptr, nullptr, 0, &preserved, nullptr, 1), CUDA_SUCCESS);
    expect("cuLibraryGetKernel(preserved binary)", cuLibraryGetKernel(&kernel, lib, "vector_add"), CUDA_SUCCESS);
    expect("cuLibraryUnload(preserved binary)", cuLibraryUnload(lib), CUDA_SUCCESS);
    CUlibraryOption unknown = CU_LIBRARY_NUM_OPTIONS;
    expect("cuLibraryLoadData(unknown option)",
           cuLibraryLoadData(&lib, kvmgpu_kernels_image, nullptr, nullptr, 0, &unknown, nullptr, 1),
           CUDA_ERROR_INVALID_VALUE);

    CUlinkState link = nullptr;
    void* out = nullptr;
    size_t out_bytes = 0;
    expect("cuLinkCreate", cuLinkCreate(0, nullptr, nullptr, &link), CUDA_SUCCESS);
    expect("cuLinkComplete(no input)", cuLinkComplete(link, &out, &out_bytes), CUDA_ERROR_INVALID_VALUE);
    expect("cuLinkAddData(fat binary)",
           cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, const_cast<unsigned char*>(kvmgpu_kernels_image),
                         kvmgpu_kernels_image_size, "kernels", 0, nullptr, nullptr),
           CUDA_SUCCESS);
    expect("cuLinkComplete", cuLinkComplete(link, &out, &out_bytes), CUDA_SUCCESS);
    expect_true("cuLinkComplete: the image", out_bytes == kvmgpu_kernels_image_size &&
                                                 memcmp(out, kvmgpu_kernels_image, out_bytes) == 0);
    CUmodule linked = nullptr;
    expect("cuModuleLoadData(the link's output)", cuModuleLoadData(&linked, out), CUDA_SUCCESS);
    expect("cuModuleUnload(the link's module)", cuModuleUnload(linked), CUDA_SUCCESS);
    expect("cuLinkAddData(a second input)",
           cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(".version 8.0"), 12, "b", 0, nullptr, nullptr),
           CUDA_SUCCESS);
    expect("cuLinkComplete(two inputs)", cuLinkComplete(link, &out, &out_bytes), CUDA_ERROR_NOT_SUPPORTED);
    expect("cuLinkDestroy", cuLinkDestroy(link), CUDA_SUCCESS);
    expect("cuLinkDestroy(again)", cuLinkDestroy(link), CUDA_ERROR_INVALID_HANDLE);

    int fd = -1;
    CUmemGenericAllocationHandle h = 0;
    expect("cuMemExportToShareableHandle",
           cuMemExportToShareableHandle(&fd, 1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_ERROR_NOT_SUPPORTED);
    expect("cuMemExportToShareableHandle(nullptr)",
           cuMemExportToShareableHandle(nullptr, 1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuMemImportFromShareableHandle",
           cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(3), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
           CUDA_ERROR_NOT_SUPPORTED);
}

// Many modules' kernels at once, as a library that enumerates its modules
// makes them: every function's launch finds its own layout (the guest's
// index of them grows past its first size), and unloading drops exactly
// the unloaded modules' functions.
void many_function_layouts(CUfunction add)
{
    constexpr unsigned kModules = 48;
    static const char* const kNames[] = {"vector_add", "matmul", "empty_kernel"};
    CUmodule mods[kModules] = {};
    CUfunction adds[kModules] = {};
    unsigned loaded = 0, found = 0;
    for (unsigned m = 0; m < kModules; ++m) {
        if (cuModuleLoadData(&mods[m], kvmgpu_kernels_image) != CUDA_SUCCESS)
            break;
        ++loaded;
        for (const char* name : kNames) {
            CUfunction f = nullptr;
            if (cuModuleGetFunction(&f, mods[m], name) == CUDA_SUCCESS)
                ++found;
            if (f != nullptr && name == kNames[0])
                adds[m] = f;
        }
    }
    expect_true("48 modules loaded, 3 kernels found in each", loaded == kModules && found == 3 * kModules);
    const unsigned n = 256;
    auto* h = static_cast<float*>(pinned_alloc(3 * n * sizeof(float)));
    for (unsigned i = 0; i < n; ++i)
        h[i] = static_cast<float>(i), h[n + i] = 2.0f;
    CUdeviceptr da = device_copy_of(h, n * 4), db = device_copy_of(h + n, n * 4), dc = 0;
    CU_CHECK(cuMemAlloc(&dc, n * 4));
    unsigned nn = n;
    void* params[] = {&da, &db, &dc, &nn};
    const CUfunction launched[] = {adds[0], adds[kModules / 2], adds[kModules - 1], add};
    bool all_ran = true;
    for (CUfunction f : launched)
        all_ran = all_ran && cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, 0, params, nullptr) == CUDA_SUCCESS;
    expect_true("vector_add of the first, a middle, the last and the first-loaded module launch", all_ran);
    expect("cuMemcpyDtoH", cuMemcpyDtoH(h + 2 * n, dc, n * 4), CUDA_SUCCESS);
    expect_true("... and add", h[2 * n] == 2.0f && h[3 * n - 1] == 257.0f);
    for (unsigned m = 0; m < kModules; m += 2)
        cuModuleUnload(mods[m]);
    expect("cuLaunchKernel(a kernel of an unloaded module among many)",
           cuLaunchKernel(adds[0], 1, 1, 1, n, 1, 1, 0, 0, params, nullptr), CUDA_ERROR_INVALID_HANDLE);
    expect("cuLaunchKernel(one of a module still loaded)",
           cuLaunchKernel(adds[kModules - 1], 1, 1, 1, n, 1, 1, 0, 0, params, nullptr), CUDA_SUCCESS);
    for (unsigned m = 1; m < kModules; m += 2)
        cuModuleUnload(mods[m]);
    expect("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
}

} // namespace

namespace {
// Cache and bank-size preferences kept and read back; a device found by its PCI bus id.
void preferences_and_bus_ids(CUfunction add)
{
    CUfunc_cache cache = CU_FUNC_CACHE_PREFER_NONE;
    expect("cuCtxSetCacheConfig(L1)", cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1), CUDA_SUCCESS);
    expect("cuCtxGetCacheConfig", cuCtxGetCacheConfig(&cache), CUDA_SUCCESS);
    expect_true("PREFER_L1 kept", cache == CU_FUNC_CACHE_PREFER_L1);
    expect("cuCtxSetCacheConfig(unknown)", cuCtxSetCacheConfig(static_cast<CUfunc_cache>(7)), CUDA_ERROR_INVALID_VALUE);
    expect("cuCtxSetCacheConfig(none)", cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_NONE), CUDA_SUCCESS);
    CUsharedconfig banks = CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE;
    expect("cuCtxSetSharedMemConfig(8 bytes)", cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE),
           CUDA_SUCCESS);
    expect("cuCtxGetSharedMemConfig", cuCtxGetSharedMemConfig(&banks), CUDA_SUCCESS);
    expect_true("8-byte banks kept", banks == CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE);
    expect("cuCtxSetSharedMemConfig(default)", cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE),
           CUDA_SUCCESS);
    expect("cuCtxGetSharedMemConfig", cuCtxGetSharedMemConfig(&banks), CUDA_SUCCESS);
    expect_true("the default is 4-byte banks", banks == CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE);
    expect("cuCtxSetSharedMemConfig(unknown)", cuCtxSetSharedMemConfig(static_cast<CUsharedconfig>(5)),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuFuncSetSharedMemConfig", cuFuncSetSharedMemConfig(add, CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE),
           CUDA_SUCCESS);
    expect("cuFuncSetSharedMemConfig(stale)", cuFuncSetSharedMemConfig(bogus(add), CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE),
           CUDA_ERROR_INVALID_HANDLE);

    char id[32] = {};
    CU_CHECK(cuDeviceGetPCIBusId(id, sizeof id, 0));
    CUdevice dev = -1;
    expect("cuDeviceGetByPCIBusId", cuDeviceGetByPCIBusId(&dev, id), CUDA_SUCCESS);
    expect_true("device 0 by its own id", dev == 0);
    for (char* c = id; *c != '\0'; ++c)
        if (*c >= 'A' && *c <= 'F')
            *c = static_cast<char>(*c - 'A' + 'a');
    dev = -1;
    expect("cuDeviceGetByPCIBusId(lower case)", cuDeviceGetByPCIBusId(&dev, id), CUDA_SUCCESS);
    expect_true("device 0 again", dev == 0);
    if (strncmp(id, "0000:", 5) == 0) {
        dev = -1;
        expect("cuDeviceGetByPCIBusId(no domain)", cuDeviceGetByPCIBusId(&dev, id + 5), CUDA_SUCCESS);
        expect_true("device 0 without its domain", dev == 0);
    }
    static const char* const kMalformed[] = {"", "zz", "0000:00", "0000:00:00", "1:2:3:4.0", "0000:00:00.0x"};
    for (const char* bad : kMalformed)
        expect("cuDeviceGetByPCIBusId(malformed)", cuDeviceGetByPCIBusId(&dev, bad), CUDA_ERROR_INVALID_VALUE);
    expect("cuDeviceGetByPCIBusId(null)", cuDeviceGetByPCIBusId(&dev, nullptr), CUDA_ERROR_INVALID_VALUE);
    expect("cuDeviceGetByPCIBusId(no such bus)", cuDeviceGetByPCIBusId(&dev, "7fff:fe:1f.7"), CUDA_ERROR_INVALID_DEVICE);
}
} // namespace

void library_support_calls(CUfunction add)
{
    preferences_and_bus_ids(add);
    pitched_memory_and_2d_memsets();
    parameters_libraries_and_links(add);
    many_function_layouts(add);
}
