// Internal to the guest CUDA API: the one vGPU connection (registers, the
// ring producer, the SG-list pool, the function table) and the helpers the
// cu* functions are written with.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/ring_producer.h"
#include "kvmtool-gpu/abi/vgpu_abi_layout.h"

namespace guest::cuda {

// A typed handle's vGPU handle number, and back.
template <class H>
uint64_t handle_bits(H h)
{
    return reinterpret_cast<uintptr_t>(h);
}
template <class H>
H handle_of(uint64_t bits)
{
    return reinterpret_cast<H>(static_cast<uintptr_t>(bits));
}

// One command as the API builds it; call_* copy it into a ring slot.
struct Call {
    uint16_t op = VGPU_OP_NOP;
    uint16_t flags = 0; // VGPU_CMD_FLAG_* besides ASYNC (call_async adds that)
    uint64_t arg[6] = {};
    const void* payload = nullptr;
    uint32_t payload_len = 0; // <= VGPU_PAYLOAD_BYTES

    // arg[] from the opcode's typed layout (its row in vgpu_ops.h).
    template <class Args>
    void set_args(const Args& a)
    {
        static_assert(sizeof a <= sizeof arg, "an argument layout fills at most arg[]");
        __builtin_memcpy(arg, &a, sizeof a);
    }
};

// The command for opcode Op with its arguments in Op's own layout (its row
// in vgpu_ops.h), so the compiler holds each call to the row: the one typed
// way to build a command.
template <uint16_t Op>
Call command(const typename kvmgpu::abi::VgpuOpTypes<Op>::Args& args)
{
    Call c;
    c.op = Op;
    c.set_args(args);
    return c;
}
// ... for an opcode that takes no arguments.
template <uint16_t Op>
Call command()
{
    static_assert(kvmgpu::abi::LayoutBytes<typename kvmgpu::abi::VgpuOpTypes<Op>::Args>::value == 0,
                  "this opcode takes arguments");
    Call c;
    c.op = Op;
    return c;
}
// The vGPU's handle for a stream argument: CU_STREAM_LEGACY and
// CU_STREAM_PER_THREAD are the default stream (guest_cuda.h).
inline uint64_t stream_arg(CUstream s)
{
    return s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD ? 0 : handle_bits(s);
}

// The vGPU's argument for a device ordinal: a negative one becomes a number
// no device has, which the vGPU refuses (CUDA_ERROR_INVALID_DEVICE).
inline uint64_t device_arg(CUdevice d) { return static_cast<uint64_t>(static_cast<int64_t>(d)); }

// NOT_INITIALIZED before a successful cuInit; the ring's failure after a
// timeout or a broken ring; else CUDA_SUCCESS.
CUresult ready();

// Submits and waits. result (optional) gets result[0..1]; payload_out
// (optional) gets the slot's payload after completion. Held async errors
// stay held (see sync_point).
CUresult call_sync(const Call& call, uint64_t* result = nullptr, void* payload_out = nullptr,
                   uint32_t payload_out_len = 0);
// call_sync for calls that return one value: *out = result[0] on success.
template <class T>
CUresult call_result(const Call& call, T* out)
{
    uint64_t res[2];
    CUresult r = call_sync(call, res);
    if (r == CUDA_SUCCESS)
        *out = static_cast<T>(res[0]);
    return r;
}
// ... for calls that return a handle.
template <class T>
CUresult call_result(const Call& call, T** out)
{
    uint64_t res[2];
    CUresult r = call_sync(call, res);
    if (r == CUDA_SUCCESS)
        *out = handle_of<T*>(res[0]);
    return r;
}
// call_sync for a call whose results are its opcode's typed layout (vgpu_ops.h).
template <class Result>
CUresult call_sync_typed(const Call& call, Result* out)
{
    static_assert(sizeof *out <= 2 * sizeof(uint64_t), "a result layout fills at most result[]");
    uint64_t res[2];
    CUresult r = call_sync(call, res);
    if (r == CUDA_SUCCESS)
        __builtin_memcpy(out, res, sizeof *out);
    return r;
}
// call_sync of opcode Op with its typed arguments; result[0] into *result when given.
template <uint16_t Op>
CUresult call(const typename kvmgpu::abi::VgpuOpTypes<Op>::Args& args, uint64_t* result = nullptr)
{
    const Call c = command<Op>(args);
    return result != nullptr ? call_result(c, result) : call_sync(c);
}
// ... of an opcode that takes no arguments.
template <uint16_t Op>
CUresult call(uint64_t* result)
{
    const Call c = command<Op>();
    return result != nullptr ? call_result(c, result) : call_sync(c);
}
// A call that makes an object from its flags: *handle = result[0].
template <uint16_t Op, class H>
CUresult call_create(uint64_t flags, H* handle)
{
    if (handle == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    return call_result(command<Op>({flags}), handle);
}
// Submits with VGPU_CMD_FLAG_ASYNC and returns; errors come at a sync point.
// Only for an opcode with VGPU_OPF_ASYNC (else CUDA_ERROR_INVALID_VALUE, and
// nothing is sent): another's error would be lost.
CUresult call_async(const Call& call);
// Submits with VGPU_CMD_FLAG_ASYNC and waits until the device has taken the
// command (its completion), not for the work it queued: for a command
// whose input outside the ring slot is about to be reused. Its error, as
// any queued call's, comes at the next sync point.
CUresult call_async_taken(const Call& call);
// The error a synchronization point reports: its own, else the first held
// async error (which is then cleared).
CUresult sync_point(CUresult own);

// A scatter-gather list area in pinned memory for one command. Waits for
// earlier SG commands when the pool must be reused. *capacity >= 1.
CUresult sg_acquire(vgpu_sg_entry** entries, uint64_t* capacity);
// Marks `used` entries as belonging to the command just submitted.
void sg_commit(uint64_t used);

// A function's parameter layout, from the vGPU (for cuLaunchKernel).
struct FunctionLayout {
    CUfunction handle;
    CUmodule module;
    uint32_t count;  // parameters
    uint32_t bytes;  // the parameter buffer
    uint32_t max_dynamic_shared; // what a launch may ask for (48 KiB unless raised)
    // cuFuncGetAttribute's answers, kept once asked (bit a of known: attribute
    // a); cuFuncSetAttribute forgets the one it sets. Libraries ask them
    // before every launch (cuDNN).
    static constexpr unsigned kCachedAttributes = 16;
    uint32_t attributes_known;
    int32_t attributes[kCachedAttributes];
    uint16_t* offsets;
    uint16_t* sizes;
    FunctionLayout* next;
};
// A record with room for `count` parameters, linked in; nullptr when out of memory.
FunctionLayout* function_add(CUfunction f, CUmodule module, uint32_t count, uint32_t bytes);
FunctionLayout* function_find(CUfunction f);
// Lays out a launch's kernelParams (void**) or `extra` buffer by l into
// buffer (l.bytes), as cuLaunchKernel takes them (cuda_module.cpp).
CUresult pack_kernel_params(const FunctionLayout& l, void** kernelParams, void** extra, uint8_t* buffer);
// The launch shape is one the device runs (dimensions, dynamic shared memory).
bool kernel_shape_ok(const FunctionLayout& l, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                     unsigned bz, unsigned shmem);
void module_forget(CUmodule module);
// This guest's live device allocations (cuMemAlloc/cuMemFree), so that
// cuMemcpy can tell device from guest addresses (unified addressing). Each
// is the current context's; allocations_forget drops a context's (the
// vGPU freed them with it).
// A graph allocation's record overlapping the new one is dropped: its graph
// went, and the device gave the address again.
void allocation_add(CUdeviceptr dptr, uint64_t bytes, CUmemoryPool pool = nullptr);
// A graph allocation (a memory node's): cuMemFree and cuMemFreeAsync free
// it in stream order and keep the record (the address stays the graph's).
void graph_allocation_add(CUdeviceptr dptr, uint64_t bytes);
bool graph_allocation(CUdeviceptr dptr);
// The allocation starting at dptr: its size and pool (nullptr: cuMemAlloc's).
bool allocation_find(CUdeviceptr dptr, uint64_t* bytes, CUmemoryPool* pool);
void allocation_remove(CUdeviceptr dptr);
void allocations_forget(CUcontext ctx);
// [p, p + bytes) lies inside one live allocation.
bool allocation_contains(uint64_t p, uint64_t bytes);
// The allocation holding p: its start, size and buffer id; false if none.
bool allocation_containing(uint64_t p, uint64_t* start, uint64_t* bytes, uint64_t* buffer_id = nullptr);
// A process-unique allocation id (CU_POINTER_ATTRIBUTE_BUFFER_ID): never
// reused, so a library can tell a new allocation at a freed one's address
// from the old one.
uint64_t next_buffer_id();
// Forgets every allocation starting in [start, start + bytes) (cuMemUnmap).
void allocations_remove_within(uint64_t start, uint64_t bytes);
// Forgets which context made the events of ctx (the vGPU freed them with
// it; cuda_stream.cpp keeps the events' contexts for cross-context waits).
void events_forget(CUcontext ctx);
// The module's kernels, from the device (cuda_module.cpp): up to `capacity`
// of them into functions[] (their layouts learnt), and *count, how many it has.
CUresult module_functions(CUmodule module, CUfunction* functions, unsigned capacity, unsigned* count);
// A library's module (made now if it is a lazy one's first use), or the
// handle itself taken as a module (cuda_library.cpp).
CUresult module_of_library_or_module(const void* handle, CUmodule* module);
// cuStreamGetId's answer, a default stream's taken from `ctx` (null: the
// current context) rather than the calling thread (cuda_stream.cpp).
CUresult stream_id_in(CUcontext ctx, CUstream stream, unsigned long long* id);

// A pinned buffer of VGPU_MAX_PARAM_BYTES for parameters that do not fit a
// ring slot (made once); nullptr when out of memory.
uint8_t* param_scratch();

// The device address of [p, p + bytes) when it lies in one registered
// pageable buffer that has one (cuda_host_memory.cpp): copies to and from
// it go to the copy engine through it, as page-locked memory's do.
bool registered_device_address(const void* p, uint64_t bytes, CUdeviceptr* out);
// Whether [p, p + bytes) is page-locked as CUDA means it (cuda_host_memory.cpp):
// a registered buffer, or identity-mapped guest RAM (the pinned allocators,
// cuMemHostAlloc's blocks), which never moves; the pageable heap is not.
bool page_locked(const void* p, uint64_t bytes);
// Unified addressing for page-locked memory (cuda_host_memory.cpp): the
// offset from a guest-physical address to its device address, which the
// guest then also reaches; 0 where there is none (or no context yet).
uint64_t unified_offset();

// Managed memory (cuda_managed.cpp). Submits `c`, a command that runs
// device code on `stream` (a launch, a graph): while the current context
// holds managed memory, the guest's bytes go to the device first, and the
// call waits for the device and brings them back before it returns (its
// error, the launch's included, is the call's). Otherwise, and on a
// capturing stream, it is queued as usual (taken: call_async_taken).
CUresult managed_launch(const Call& c, CUstream stream, bool taken);
// [p, p + bytes) inside one managed allocation: its guest bytes, else nullptr.
void* managed_host_view(uint64_t p, uint64_t bytes);
// The managed allocation holding p: its start and size; false if none.
bool managed_find(uint64_t p, uint64_t* start, uint64_t* bytes, uint64_t* buffer_id = nullptr);
// cuMemFree of a managed allocation; CUDA_ERROR_NOT_FOUND when dptr is not one.
CUresult managed_free(CUdeviceptr dptr);
void managed_forget(CUcontext ctx); // its context was destroyed: the vGPU freed the device side

// The top of the calling thread's context stack (nullptr: none), cuda_context.cpp.
CUcontext current_context();
// Makes the vGPU's current context the calling thread's (a no-op when it is).
CUresult match_current();

RingProducer& ring();
const VgpuGuestInfo& info();

} // namespace guest::cuda
