// The vGPU ABI as one constexpr table (C++ only): each opcode's row from
// VGPU_OPS with its layouts' sizes, the static_asserts that every layout
// fits the slot it travels in, and the hash of the whole ABI's layout that
// tests/unit/vgpu/vgpu_abi_layout_test.cpp holds against
// VGPU_ABI_LAYOUT_HASH (so a layout change without a VGPU_ABI_VERSION bump
// fails). Freestanding-safe: no library headers.
#pragma once

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/abi/vgpu_blas_abi.h"

namespace kvmgpu::abi {

// A layout's bytes; `void` (no arguments, no results) has none.
template <class T>
struct LayoutBytes {
    static constexpr uint32_t value = sizeof(T);
};
template <>
struct LayoutBytes<void> {
    static constexpr uint32_t value = 0;
};

// Each opcode's layouts as types (Args, Results: the row's, `void` for
// none): how the device decodes a command into its row's struct once.
template <uint16_t Number>
struct VgpuOpTypes;
#define VGPU_OP_TYPES_(name, number, flags, args, result) \
    template <>                                         \
    struct VgpuOpTypes<number> {                        \
        using Args = args;                              \
        using Results = result;                         \
    };
VGPU_OPS(VGPU_OP_TYPES_)
#undef VGPU_OP_TYPES_

struct VgpuOpRow {
    uint16_t number;
    uint32_t flags;       // VGPU_OPF_*
    uint32_t arg_bytes;    // of the command's arg[] (48)
    uint32_t result_bytes; // of the completion's result[] (16)
    const char* name;
};

#define VGPU_OP_ROW_(name, number, flags, args, result) \
    VgpuOpRow{number, flags, LayoutBytes<args>::value, LayoutBytes<result>::value, #name},
inline constexpr VgpuOpRow kVgpuOps[] = {VGPU_OPS(VGPU_OP_ROW_)};
#undef VGPU_OP_ROW_

constexpr bool rows_fit_and_ascend() {
    for (uint32_t i = 0; i < sizeof kVgpuOps / sizeof kVgpuOps[0]; ++i) {
        const VgpuOpRow& r = kVgpuOps[i];
        if (r.arg_bytes > sizeof(vgpu_command::arg) || r.result_bytes > sizeof(vgpu_completion::result)) return false;
        if (r.number >= VGPU_OP_MAX_ || (i > 0 && kVgpuOps[i - 1].number >= r.number)) return false;
        if ((r.flags & VGPU_OPF_ASYNC) && !(r.flags & VGPU_OPF_CTX)) return false; // queued work runs in a context
    }
    return true;
}
static_assert(rows_fit_and_ascend(),
              "vgpu_ops.h: a layout is larger than arg[] (48 bytes) or result[] (16), a number is past "
              "VGPU_OP_MAX_ or out of order, or an ASYNC opcode lacks CTX");

namespace detail {
struct Fnv {
    uint64_t h = 0xcbf29ce484222325ull;
    constexpr Fnv& add(uint64_t v) {
        for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
        return *this;
    }
};
} // namespace detail

// FNV-1a over what a guest and the VMM must agree on: the registers, the
// ring's records, every opcode's number, guest-visible facts and layouts'
// sizes, and the payload structs' sizes. Field names and comments do not
// count.
constexpr uint64_t vgpu_abi_layout_hash() {
    detail::Fnv f;
    f.add(VGPU_MAGIC);
    const uint64_t registers[] = {VGPU_REG_MAGIC, VGPU_REG_VERSION, VGPU_REG_FEATURES, VGPU_REG_RING_GPA, VGPU_REG_RING_SIZE,
                       VGPU_REG_CONTROL, VGPU_REG_STATUS, VGPU_REG_ERROR, VGPU_REG_BACKEND, VGPU_REG_DOORBELL_MODE,
                       VGPU_REG_MAX_RING, VGPU_DOORBELL_OFFSET, VGPU_PAYLOAD_BYTES};
    for (uint64_t v : registers) f.add(v);
    const uint64_t records[] = {sizeof(vgpu_ring_header), __builtin_offsetof(vgpu_ring_header, consumer),
                       __builtin_offsetof(vgpu_ring_header, kick_event), sizeof(vgpu_command),
                       __builtin_offsetof(vgpu_command, arg), sizeof(vgpu_completion),
                       __builtin_offsetof(vgpu_completion, result), sizeof(vgpu_sg_entry), sizeof(vgpu_param_desc),
                       sizeof(vgpu_launch_args), __builtin_offsetof(vgpu_launch_args, grid),
                       __builtin_offsetof(vgpu_launch_args, block), __builtin_offsetof(vgpu_launch_args, params),
                       sizeof(vgpu_graph_kernel_payload), sizeof(vgpu_fft_plan_many), sizeof(vgpu_array_desc),
                       sizeof(vgpu_copy3d), sizeof(vgpu_tex_resource), sizeof(vgpu_tex_object),
                       sizeof(vgpu_blas_level1), sizeof(vgpu_blas_level2), sizeof(vgpu_blas_gemm),
                       sizeof(vgpu_blas_level3)};
    for (uint64_t v : records) f.add(v);
    // The facts a guest acts on; the VMM's own policy (capture, nodes, quota) may change alone.
    constexpr uint32_t kGuestFacts = VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_COOP;
    for (const VgpuOpRow& r : kVgpuOps) f.add(r.number).add(r.flags & kGuestFacts).add(r.arg_bytes).add(r.result_bytes);
    return f.h;
}

} // namespace kvmgpu::abi
