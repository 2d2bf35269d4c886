// The VMM's end of a remote GPU: a command engine whose commands run on a
// GPU server (gpu_server.h). The device's executor consumes the ring here,
// as with the inline engine, and each copied command crosses to the server
// as one message; the server reads and writes the guest RAM the command
// names by RMA on the regions registered here, and its result comes back
// into the ring. Guest RAM never leaves this process otherwise.
#pragma once

#include <memory>
#include <string>

#include "kvmtool-gpu/devices/vgpu/command_engine.h"
#include "kvmtool-gpu/remote/key_proof.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::remote {

struct RemoteTarget {
    std::string address; // the server's HOST:PORT
    SharedKey key;
};

// Connects, proves the key (and has the server prove it), registers guest
// RAM and has the server start its backend: all before returning, so a
// wrong address, key or build is one line in *why and nullptr. `mem` must
// outlive the engine.
std::unique_ptr<vgpu::CommandEngine> make_remote_engine(const memmap::GuestMemory& mem, const vgpu::VgpuOptions& opts,
                                                        const RemoteTarget& target, std::string* why);

} // namespace kvmgpu::remote
