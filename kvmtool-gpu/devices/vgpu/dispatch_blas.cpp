// Handlers for cuBLAS forwarded as calls (VGPU_OP_BLAS_*, vgpu_blas_abi.h):
// handles (VM handles owned by the current context, each charged a
// default workspace against the VM's quota), and the compute calls, whose
// structs are checked by blas_checks.h and whose every operand must lie in
// one of the VM's allocations (or its RAM's zero-copy window) before the
// backend's library sees it. GEMM_POINTERS' device arrays are read here,
// after the handle's stream's earlier work, and each pointer checked; the
// library gets the checked copies, never the guest's arrays.
#include <cstring>
#include <type_traits>

#include "kvmtool-gpu/abi/blas_checks.h"
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
// cublasMath_t: DEFAULT, TENSOR_OP, PEDANTIC, TF32_TENSOR_OP, with
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (16) or not.
bool math_mode_ok(uint64_t mode) { return (mode & ~uint64_t{16}) <= 3; }
} // namespace

BlasLibrary* CommandDispatch::blas_library() {
    BlasLibrary* lib = backend().blas();
    if (!lib && !blas_missing_logged_) {
        log_warn("vgpu: cuBLAS calls refused: the %s backend has no BLAS library", devices_.describe().c_str());
        blas_missing_logged_ = true;
    }
    return lib;
}

CommandResult CommandDispatch::op_BLAS_CREATE(GuestCommand&) {
    BlasLibrary* lib = blas_library();
    if (!lib) return fail(VGPU_ERROR_NOT_INITIALIZED, "no BLAS library");
    if (!allocs_.charge(kBlasHandleCharge))
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "a cuBLAS handle's workspace is past the VM's device-memory quota");
    BackendBlas h = 0;
    const Status s = backend_result(lib->create(&h));
    if (s != VGPU_SUCCESS) {
        allocs_.uncharge(kBlasHandleCharge);
        return done(s);
    }
    const auto vm = blas_.insert(BlasEntry{h, 0}, ctx_);
    if (!vm) {
        lib->destroy(h);
        allocs_.uncharge(kBlasHandleCharge);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "cuBLAS handle table full");
    }
    return done(VGPU_SUCCESS, *vm);
}

CommandResult CommandDispatch::op_BLAS_DESTROY(GuestCommand& c) {
    const auto e = blas_.erase(args_of<VGPU_OP_BLAS_DESTROY>(c).handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuBLAS handle");
    allocs_.uncharge(kBlasHandleCharge);
    return done(backend_result(backend().blas()->destroy(e->library)));
}

// A handle exists only where the backend has the library (BLAS_CREATE).
CommandResult CommandDispatch::op_BLAS_SET_STREAM(GuestCommand& c) {
    const auto [handle, stream] = args_of<VGPU_OP_BLAS_SET_STREAM>(c);
    BlasEntry* e = blas_.find(handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuBLAS handle");
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    const Status st = backend_result(backend().blas()->set_stream(e->library, s));
    if (st == VGPU_SUCCESS) e->stream = s;
    return done(st);
}

CommandResult CommandDispatch::op_BLAS_SET_MATH_MODE(GuestCommand& c) {
    const auto [handle, mode] = args_of<VGPU_OP_BLAS_SET_MATH_MODE>(c);
    const BlasEntry* e = blas_.find(handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuBLAS handle");
    if (!math_mode_ok(mode)) return fail(VGPU_ERROR_INVALID_VALUE, "cublasMath_t");
    return done(backend_result(backend().blas()->set_math_mode(e->library, static_cast<uint32_t>(mode))));
}

// Memory the library writes, so one of the VM's allocations (dptr and
// bytes 0: the library's default).
CommandResult CommandDispatch::op_BLAS_SET_WORKSPACE(GuestCommand& c) {
    const auto [handle, dptr, bytes] = args_of<VGPU_OP_BLAS_SET_WORKSPACE>(c);
    const BlasEntry* e = blas_.find(handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuBLAS handle");
    if ((dptr != 0 || bytes != 0) && !allocs_.in_allocation(dptr, bytes))
        return fail(VGPU_ERROR_INVALID_VALUE, "cuBLAS workspace not inside one allocation of this VM");
    return done(backend_result(backend().blas()->set_workspace(e->library, dptr, bytes)));
}

CommandResult CommandDispatch::op_BLAS_GET_VERSION(GuestCommand&) {
    BlasLibrary* lib = blas_library();
    if (!lib) return fail(VGPU_ERROR_NOT_INITIALIZED, "no BLAS library");
    int v = 0;
    const Status s = lib->version(&v);
    return done(s, static_cast<uint64_t>(v));
}

// The call's struct, copied out of the payload; nullptr (and the handle's
// entry unset) when the payload or the handle is wrong.
template <class Call>
const char* CommandDispatch::blas_call(const GuestCommand& c, Call* call, BlasEntry** entry) {
    static_assert(std::is_trivially_copyable_v<Call>);
    if (c.desc.payload_len != sizeof(Call)) return "BLAS call payload is not the call's struct";
    std::memcpy(call, c.payload.data(), sizeof(Call));
    *entry = blas_.find(call->head.handle, ctx_);
    return *entry ? nullptr : "cuBLAS handle";
}

bool CommandDispatch::library_range_ok(uint64_t dptr, uint64_t bytes) {
    if (!allocs_.contains(dptr, bytes)) return false;
    // The library works on the current context's device: memory another
    // device holds would fault there (the VM's own loss, but refused here).
    const uint64_t owner = allocs_.owner_containing(dptr);
    return owner == 0 || device_of(owner) == selected_device_;
}

const char* CommandDispatch::blas_operands_ok(const BlasPlan& plan) {
    for (uint32_t i = 0; i < plan.count; ++i) {
        if (plan.operands[i].dptr % plan.operands[i].align) {
            snprintf(blas_why_, sizeof blas_why_, "cuBLAS operand %s at 0x%llx is not aligned to its %llu-byte element",
                     plan.operands[i].name, static_cast<unsigned long long>(plan.operands[i].dptr),
                     static_cast<unsigned long long>(plan.operands[i].align));
            return blas_why_;
        }
        if (!library_range_ok(plan.operands[i].dptr, plan.operands[i].bytes)) {
            snprintf(blas_why_, sizeof blas_why_, "cuBLAS operand %s [0x%llx, +%llu) is not inside this VM's memory on this device",
                     plan.operands[i].name, static_cast<unsigned long long>(plan.operands[i].dptr),
                     static_cast<unsigned long long>(plan.operands[i].bytes));
            return blas_why_;
        }
    }
    return nullptr;
}

#define KVMGPU_BLAS_PREAMBLE(Type, check)                                                              \
    Type call;                                                                                         \
    BlasEntry* e = nullptr;                                                                            \
    if (const char* why = blas_call(c, &call, &e))                                                     \
        return fail(e || c.desc.payload_len != sizeof(Type) ? VGPU_ERROR_INVALID_VALUE : VGPU_ERROR_INVALID_HANDLE, why); \
    const BlasPlan plan = check(call);                                                                 \
    if (plan.why) return fail(plan.status, plan.why);                                                  \
    if (const char* why = blas_operands_ok(plan)) return fail(VGPU_ERROR_INVALID_VALUE, why);

CommandResult CommandDispatch::op_BLAS_LEVEL1(GuestCommand& c) {
    KVMGPU_BLAS_PREAMBLE(vgpu_blas_level1, check_level1)
    BlasResult r;
    const Status s = backend_result(backend().blas()->level1(e->library, call, &r));
    return done(s, r.bits[0], r.bits[1]);
}

CommandResult CommandDispatch::op_BLAS_LEVEL2(GuestCommand& c) {
    KVMGPU_BLAS_PREAMBLE(vgpu_blas_level2, check_level2)
    return done(backend_result(backend().blas()->level2(e->library, call)));
}

CommandResult CommandDispatch::op_BLAS_LEVEL3(GuestCommand& c) {
    KVMGPU_BLAS_PREAMBLE(vgpu_blas_level3, check_level3)
    return done(backend_result(backend().blas()->level3(e->library, call)));
}

namespace {
// No C[j] range overlaps any of the three pointer arrays.
bool outputs_miss_arrays(std::span<const uint64_t> c, uint64_t c_bytes, const vgpu_blas_matrix* const arrays[3], uint64_t n) {
    for (uint64_t p : c)
        for (int i = 0; i < 3; ++i) {
            const uint64_t lo = arrays[i]->ptr, hi = lo + n * sizeof(uint64_t);
            if (p < hi && lo < p + c_bytes) return false;
        }
    return true;
}
} // namespace

CommandResult CommandDispatch::op_BLAS_GEMM(GuestCommand& c) {
    KVMGPU_BLAS_PREAMBLE(vgpu_blas_gemm, check_gemm)
    BlasPointers pointers;
    if (call.form == VGPU_BLAS_GEMM_POINTERS && call.batch > 0) {
        const uint64_t n = static_cast<uint64_t>(call.batch);
        const vgpu_blas_matrix* arrays[3] = {&call.a, &call.b, &call.c};
        GemmPointersKey key{.epoch = device_write_epoch_, .ctx = ctx_, .handle = call.head.handle, .arrays = {call.a.ptr, call.b.ptr, call.c.ptr},
                            .batch = n, .bytes = {plan.matrix_bytes[0], plan.matrix_bytes[1], plan.matrix_bytes[2]},
                            .align = {plan.matrix_align[0], plan.matrix_align[1], plan.matrix_align[2]}, .valid = true};
        const bool cached = key == gemm_pointers_cache_;
        if (!cached) blas_pointers_.resize(3 * n);
        for (int i = 0; i < 3 && !cached; ++i) {
            if (plan.matrix_bytes[i] == 0) continue; // not read (an empty product)
            uint64_t* out = blas_pointers_.data() + i * n;
            // After the stream's earlier work, which may have written the array.
            const Status s = backend_result(backend().memcpy_dtoh(out, arrays[i]->ptr, n * sizeof(uint64_t), e->stream, false));
            if (s != VGPU_SUCCESS) return done(s);
            for (uint64_t j = 0; j < n; ++j)
                if (out[j] % plan.matrix_align[i] || !library_range_ok(out[j], plan.matrix_bytes[i])) {
                    snprintf(blas_why_, sizeof blas_why_, "gemm batched: %c[%llu] = 0x%llx is misaligned or not inside this VM's memory on this device",
                             "ABC"[i], static_cast<unsigned long long>(j), static_cast<unsigned long long>(out[j]));
                    return fail(VGPU_ERROR_INVALID_VALUE, blas_why_);
                }
        }
        pointers = {{blas_pointers_.data(), n}, {blas_pointers_.data() + n, n}, {blas_pointers_.data() + 2 * n, n}, cached};
        // Cacheable when the products' outputs miss the three arrays: then
        // this call writes nothing the next one would read back.
        gemm_pointers_cache_ = outputs_miss_arrays(pointers.c, plan.matrix_bytes[2], arrays, n) ? key : GemmPointersKey{};
        keeps_device_memory_ = gemm_pointers_cache_.valid;
    }
    return done(backend_result(backend().blas()->gemm(e->library, call, pointers)));
}

#undef KVMGPU_BLAS_PREAMBLE

void CommandDispatch::destroy_blas_of(uint64_t ctx) {
    blas_.erase_owned_by(ctx, [&](const BlasEntry& e) {
        allocs_.uncharge(kBlasHandleCharge);
        if (BlasLibrary* lib = backend().blas()) lib->destroy(e.library);
    });
}

} // namespace kvmgpu::vgpu
