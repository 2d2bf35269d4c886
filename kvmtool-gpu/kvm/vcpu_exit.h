// Why KVM_RUN returned, as a variant: the run loop visits it and each
// alternative carries exactly what its handler needs.
#pragma once

#include <cstdint>
#include <span>
#include <variant>

namespace kvmgpu::exit {

// Port I/O: `data` is the kvm_run buffer (count * size bytes; `in` fills it).
struct PortIo {
    uint16_t port;
    uint8_t size;
    uint32_t count;
    bool in;
    std::span<uint8_t> data;
};
// MMIO: `data` is kvm_run's 8-byte buffer, `len` bytes of it in use.
struct Mmio {
    uint64_t addr;
    uint32_t len;
    bool write;
    std::span<uint8_t> data;
};
struct Halt {};
struct Shutdown {};                 // triple fault
struct FailEntry { uint64_t reason; uint32_t cpu; };
struct InternalError { uint32_t suberror; };
struct Interrupted {};              // a signal (timeout) or immediate_exit
struct SystemEvent { uint32_t type; };
struct Other { uint32_t reason; };

} // namespace kvmgpu::exit

namespace kvmgpu {
using VcpuExit = std::variant<exit::PortIo, exit::Mmio, exit::Halt, exit::Shutdown, exit::FailEntry,
                              exit::InternalError, exit::Interrupted, exit::SystemEvent, exit::Other>;
}
