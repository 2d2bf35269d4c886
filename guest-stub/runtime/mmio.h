// Volatile MMIO and port accessors. Each is exactly one simple mov/in/out
// instruction (inline asm, so the compiler can neither split, merge nor
// vectorise it): KVM decodes the faulting instruction on an MMIO exit, and an
// 8-byte register must arrive as one 8-byte access.
#pragma once

#include <stdint.h>

namespace guest {

inline uint32_t mmio_read32(uint64_t addr)
{
    uint32_t v;
    asm volatile("movl (%1), %0" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

inline uint64_t mmio_read64(uint64_t addr)
{
    uint64_t v;
    asm volatile("movq (%1), %0" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

inline void mmio_write32(uint64_t addr, uint32_t v)
{
    asm volatile("movl %0, (%1)" : : "r"(v), "r"(addr) : "memory");
}

inline void mmio_write64(uint64_t addr, uint64_t v)
{
    asm volatile("movq %0, (%1)" : : "r"(v), "r"(addr) : "memory");
}

// Orders compiler-visible memory accesses; on x86 (TSO) that plus program
// order is all a store-release or load-acquire needs.
inline void compiler_barrier() { asm volatile("" : : : "memory"); }

inline void cpu_relax() { asm volatile("pause" : : : "memory"); }

} // namespace guest
