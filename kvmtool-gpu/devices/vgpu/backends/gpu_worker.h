// The GPU worker: what a process forked by RemoteBackend runs. It makes its
// own GpuBackend (through a factory, so tests can host the host backend),
// then serves RemoteBackend's requests from the RpcChannel, one at a time,
// until asked to quit or until the VMM is gone, and _exit()s.
//
// The protocol (one RpcRequest, one RpcReply, the channel's data area):
// every GpuBackend method has an RpcOp; scalars travel in arg[] / out[],
// byte arrays (module images, names, kernel parameters, scatter-gather run
// lists, staged copies) in the data area. Host pointers travel as numbers
// only when they lie in guest RAM that both processes share (checked by the
// VMM side when the RAM is registered, see shared_pieces.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/rpc_channel.h"

namespace kvmgpu::vgpu {

// Makes the worker's backend, in the worker; nullptr with a one-line *why.
using BackendFactory = std::function<std::unique_ptr<GpuBackend>(std::string* why)>;

enum class RpcOp : uint32_t {
    // out: id, real_kernels, default_sg_strategy, register_ns; data: describe(),
    // or (status != SUCCESS) why the backend could not be made.
    Info = 1,
    // arg: host, bytes, pieces; data: the VMM's SharedPiece list. out[0]: 1 if
    // the worker sees the same pages, out[1]: device address of host.
    RegisterGuestRam,
    GuestRamDeviceAddress, // arg: host; out[0]
    DeviceCount,
    DeviceAttribute,       // arg: attribute, ordinal
    DeviceName,            // arg: ordinal, len; data out: len bytes
    DeviceTotalMem,
    CtxSynchronize,
    MemAlloc,
    MemFree,
    MemGetInfo,
    // arg: device address, host (or kStaged: data area), bytes, stream, async
    MemcpyHtoD,
    MemcpyDtoH,
    MemcpyDtoD,
    // arg: dptr, runs, strategy, stream, async; data: the HostRun array
    MemcpyHtoDSg,
    MemcpyDtoHSg,
    MemsetD8,
    MemsetD32,
    ModuleLoad,            // arg: bytes; data: image and a NUL
    ModuleUnload,
    ModuleGetFunction,     // arg: module, name length; data: name. out: function, parameter count;
                           // data out: (offset, size) uint32 pairs
    // arg: function, grid x|y<<32, grid z|block x<<32, block y|z<<32, shared,
    // stream, nparams; data: uint16 sizes, then each parameter 16-aligned
    Launch,
    StreamCreate,
    StreamSynchronize,
    StreamDestroy,
    EventCreate,
    EventRecord,
    EventSynchronize,
    EventElapsedMs,        // out[0]: the float's bits
    EventDestroy,
    RecoverFrom,           // arg: status; out[0]: recovered, out[1]: still usable afterwards
    InjectFault,           // arg: WorkerFault (tests)
    Quit,                  // destroy the backend and exit
    // arg: htod, dptr, list (host), count, total, stream, async, regions;
    // data: the RamRegion array
    MemcpySgWalk,
};

// RpcRequest::flags
inline constexpr uint32_t kRpcStaged = 1; // the copy's host side is the data area, not a pointer

// Test-only faults a worker can be told to commit.
enum class WorkerFault : uint32_t {
    Crash = 1,        // dies of SIGKILL at once, without replying
    HangNextCall = 2, // replies, then never answers the next request
};

// Runs in the child after fork(); never returns. `parent` is the VMM's pid.
[[noreturn]] void run_gpu_worker(RpcChannel& channel, const BackendFactory& make, pid_t parent);

} // namespace kvmgpu::vgpu
