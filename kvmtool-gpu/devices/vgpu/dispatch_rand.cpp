// Handlers for cuRAND's host API forwarded as calls (VGPU_OP_RAND_*):
// generators are VM handles owned by the current context, each charged
// its device state against the VM's quota; a generation's output range
// must lie inside one of the VM's allocations before the library writes it.
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

#include <bit>

namespace kvmgpu::vgpu {

CommandResult CommandDispatch::op_rand_create(GuestCommand& c) {
    RandLibrary* lib = backend_.rand();
    if (!lib) return fail(VGPU_ERROR_NOT_INITIALIZED, "this backend has no cuRAND");
    if (!rand_type_ok(c.desc.arg[0])) return fail(VGPU_ERROR_INVALID_VALUE, "not a pseudo-random curandRngType_t");
    if (!allocs_.charge(kRandGeneratorCharge))
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "a cuRAND generator's state is past the VM's device-memory quota");
    BackendRand g = 0;
    const Status s = backend_result(lib->create(static_cast<uint32_t>(c.desc.arg[0]), &g));
    if (s != VGPU_SUCCESS) {
        allocs_.uncharge(kRandGeneratorCharge);
        return done(s);
    }
    const auto vm = rand_.insert(g, ctx_);
    if (!vm) {
        lib->destroy(g);
        allocs_.uncharge(kRandGeneratorCharge);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "cuRAND generator table full");
    }
    return done(VGPU_SUCCESS, *vm);
}

CommandResult CommandDispatch::op_rand_destroy(GuestCommand& c) {
    const auto g = rand_.erase(c.desc.arg[0], ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "cuRAND generator");
    allocs_.uncharge(kRandGeneratorCharge);
    return done(backend_result(backend_.rand()->destroy(*g)));
}

CommandResult CommandDispatch::op_rand_set(GuestCommand& c) {
    const BackendRand* g = rand_.find(c.desc.arg[0], ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "cuRAND generator");
    if (c.desc.opcode == VGPU_OP_RAND_SET_SEED) return done(backend_result(backend_.rand()->set_seed(*g, c.desc.arg[1])));
    BackendStream s;
    if (!stream_of(c.desc.arg[1], &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    return done(backend_result(backend_.rand()->set_stream(*g, s)));
}

// arg1 dptr, arg2 count, arg3 kind, arg4 mean, arg5 stddev (double bits).
CommandResult CommandDispatch::op_rand_generate(GuestCommand& c) {
    const BackendRand* g = rand_.find(c.desc.arg[0], ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "cuRAND generator");
    const uint64_t dptr = c.desc.arg[1], count = c.desc.arg[2], kind = c.desc.arg[3];
    const uint64_t element = rand_element_bytes(kind);
    if (element == 0) return fail(VGPU_ERROR_INVALID_VALUE, "unknown cuRAND generation kind");
    if (rand_is_normal(kind) && count % 2) return fail(VGPU_ERROR_INVALID_VALUE, "a normal generation of an odd count");
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(count, element, &bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "count * element overflows");
    if (count == 0) return done(VGPU_SUCCESS);
    if (dptr % element) return fail(VGPU_ERROR_INVALID_VALUE, "cuRAND output not aligned to its element");
    if (!library_range_ok(dptr, bytes))
        return fail(VGPU_ERROR_INVALID_VALUE, "cuRAND output not inside this VM's memory on this device");
    const double mean = std::bit_cast<double>(c.desc.arg[4]), stddev = std::bit_cast<double>(c.desc.arg[5]);
    return done(backend_result(backend_.rand()->generate(*g, static_cast<uint32_t>(kind), dptr, count, mean, stddev)));
}

void CommandDispatch::destroy_rand_of(uint64_t ctx) {
    rand_.erase_owned_by(ctx, [&](BackendRand g) {
        allocs_.uncharge(kRandGeneratorCharge);
        if (RandLibrary* lib = backend_.rand()) lib->destroy(g);
    });
}

} // namespace kvmgpu::vgpu
