// Handlers for cuRAND's host API forwarded as calls (VGPU_OP_RAND_*):
// generators are VM handles owned by the current context, each charged
// its device state against the VM's quota; a generation's output range
// must lie inside one of the VM's allocations before the library writes it.
// Each generator's type is kept here: what a call may do depends on its
// family (pseudo- or quasi-random), as cuRAND's rules say.
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

#include <bit>

#include "kvmtool-gpu/devices/vgpu/rand/curand_tables.h"

namespace kvmgpu::vgpu {

CommandResult CommandDispatch::op_RAND_CREATE(GuestCommand& c) {
    RandLibrary* lib = backend().rand();
    if (!lib) return fail(VGPU_ERROR_NOT_INITIALIZED, "this backend has no cuRAND");
    const uint64_t requested = args_of<VGPU_OP_RAND_CREATE>(c).type;
    if (!rand_type_ok(requested)) return fail(VGPU_ERROR_INVALID_VALUE, "not a curandRngType_t cuRAND generates with");
    const auto type = static_cast<uint32_t>(requested);
    if (!allocs_.charge(kRandGeneratorCharge))
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "a cuRAND generator's state is past the VM's device-memory quota");
    BackendRand g = 0;
    const Status s = backend_result(lib->create(type, &g));
    if (s != VGPU_SUCCESS) {
        allocs_.uncharge(kRandGeneratorCharge);
        return done(s);
    }
    const auto vm = rand_.insert(RandEntry{g, type}, ctx_);
    if (!vm) {
        lib->destroy(g);
        allocs_.uncharge(kRandGeneratorCharge);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "cuRAND generator table full");
    }
    return done(VGPU_SUCCESS, *vm);
}

CommandResult CommandDispatch::op_RAND_DESTROY(GuestCommand& c) {
    const auto e = rand_.erase(args_of<VGPU_OP_RAND_DESTROY>(c).handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuRAND generator");
    allocs_.uncharge(kRandGeneratorCharge);
    return done(backend_result(backend().rand()->destroy(e->gen)));
}

// SET_SEED (pseudo-random only), SET_STREAM, SET_OFFSET (any value: a
// position in the sequence), SET_ORDERING (one of the generator's family),
// SET_DIMENSIONS (quasi-random only, 1..20000): the generator and the value
// (for SET_STREAM the stream), as each opcode's row gives them.
CommandResult CommandDispatch::rand_set(uint16_t op, uint64_t generator, uint64_t v) {
    const RandEntry* e = rand_.find(generator, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuRAND generator");
    RandLibrary& lib = *backend().rand();
    switch (op) {
    case VGPU_OP_RAND_SET_SEED:
        if (rand_is_quasi(e->type)) return fail(VGPU_ERROR_INVALID_VALUE, "a seed for a quasi-random generator");
        return done(backend_result(lib.set_seed(e->gen, v)));
    case VGPU_OP_RAND_SET_OFFSET: return done(backend_result(lib.set_offset(e->gen, v)));
    case VGPU_OP_RAND_SET_ORDERING:
        if (!rand_ordering_ok(e->type, v)) return fail(VGPU_ERROR_INVALID_VALUE, "a curandOrdering_t not of the generator's family");
        return done(backend_result(lib.set_ordering(e->gen, static_cast<uint32_t>(v))));
    case VGPU_OP_RAND_SET_DIMENSIONS:
        if (!rand_is_quasi(e->type)) return fail(VGPU_ERROR_INVALID_VALUE, "dimensions for a pseudo-random generator");
        if (v < 1 || v > VGPU_RAND_MAX_DIMENSIONS) return fail(VGPU_ERROR_INVALID_VALUE, "quasi-random dimensions not in 1..20000");
        return done(backend_result(lib.set_dimensions(e->gen, static_cast<uint32_t>(v))));
    }
    BackendStream s;
    if (!stream_of(v, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    return done(backend_result(lib.set_stream(e->gen, s)));
}

// count values of a kind (VGPU_RAND_*) at dptr; mean and stddev as doubles' bits.
CommandResult CommandDispatch::op_RAND_GENERATE(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_RAND_GENERATE>(c);
    const RandEntry* e = rand_.find(a.generator, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuRAND generator");
    const uint64_t dptr = a.dptr, count = a.count, kind = a.kind;
    const uint64_t element = rand_element_bytes(kind);
    if (element == 0) return fail(VGPU_ERROR_INVALID_VALUE, "unknown cuRAND generation kind");
    if (rand_is_pseudo(e->type) && rand_is_normal(kind) && count % 2)
        return fail(VGPU_ERROR_INVALID_VALUE, "a pseudo-random normal generation of an odd count");
    if (kind == VGPU_RAND_LONG_LONG && e->type != 203 && e->type != 204)
        return fail(VGPU_ERROR_INVALID_VALUE, "64-bit words from a generator other than a 64-bit Sobol one");
    if (kind == VGPU_RAND_BITS && (e->type == 203 || e->type == 204))
        return fail(VGPU_ERROR_INVALID_VALUE, "32-bit words from a 64-bit Sobol generator");
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(count, element, &bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "count * element overflows");
    if (count == 0) return done(VGPU_SUCCESS);
    if (dptr % element) return fail(VGPU_ERROR_INVALID_VALUE, "cuRAND output not aligned to its element");
    if (!library_range_ok(dptr, bytes))
        return fail(VGPU_ERROR_INVALID_VALUE, "cuRAND output not inside this VM's memory on this device");
    const double mean = std::bit_cast<double>(a.mean_bits), stddev = std::bit_cast<double>(a.stddev_bits);
    return done(backend_result(backend().rand()->generate(e->gen, static_cast<uint32_t>(kind), dptr, count, mean, stddev)));
}

// A table (VGPU_RAND_TABLE_*) into dptr, bytes exactly the table's: a
// synchronous copy from the host library's memory into the VM's.
CommandResult CommandDispatch::op_RAND_GET_TABLE(GuestCommand& c) {
    const auto [id, dptr, bytes] = args_of<VGPU_OP_RAND_GET_TABLE>(c);
    const uint64_t want = curand_table_bytes(id);
    if (want == 0) return fail(VGPU_ERROR_INVALID_VALUE, "not a cuRAND direction-vector set or scramble-constant table");
    if (bytes != want) return fail(VGPU_ERROR_INVALID_VALUE, "cuRAND table: not the table's size");
    if (dptr % 8 || !library_range_ok(dptr, bytes))
        return fail(VGPU_ERROR_INVALID_VALUE, "cuRAND table's destination not inside this VM's memory on this device");
    const std::span<const uint8_t> table = curand_table(id);
    if (table.empty()) return fail(VGPU_ERROR_NOT_SUPPORTED, "no cuRAND tables on this host (libcurand.so.10 not found)");
    return done(backend_result(backend().memcpy_htod(dptr, table.data(), bytes, 0, false)));
}

void CommandDispatch::destroy_rand_of(uint64_t ctx) {
    rand_.erase_owned_by(ctx, [&](const RandEntry& e) {
        allocs_.uncharge(kRandGeneratorCharge);
        if (RandLibrary* lib = backend().rand()) lib->destroy(e.gen);
    });
}

CommandResult CommandDispatch::op_RAND_SET_STREAM(GuestCommand& c) {
    const auto [generator, stream] = args_of<VGPU_OP_RAND_SET_STREAM>(c);
    return rand_set(VGPU_OP_RAND_SET_STREAM, generator, stream);
}
// SET_SEED, SET_OFFSET, SET_ORDERING, SET_DIMENSIONS: one row layout.
CommandResult CommandDispatch::rand_set_value(const GuestCommand& c) {
    const auto [generator, value] = args_of<VGPU_OP_RAND_SET_SEED, VGPU_OP_RAND_SET_OFFSET, VGPU_OP_RAND_SET_ORDERING,
                                            VGPU_OP_RAND_SET_DIMENSIONS>(c);
    return rand_set(c.desc.opcode, generator, value);
}
CommandResult CommandDispatch::op_RAND_SET_SEED(GuestCommand& c) { return rand_set_value(c); }
CommandResult CommandDispatch::op_RAND_SET_OFFSET(GuestCommand& c) { return rand_set_value(c); }
CommandResult CommandDispatch::op_RAND_SET_ORDERING(GuestCommand& c) { return rand_set_value(c); }
CommandResult CommandDispatch::op_RAND_SET_DIMENSIONS(GuestCommand& c) { return rand_set_value(c); }

} // namespace kvmgpu::vgpu
