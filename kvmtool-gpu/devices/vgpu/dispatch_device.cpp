// Handlers for device queries, context synchronisation, streams and events.
#include <algorithm>
#include <climits>
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kStreamFlagsAllowed = 0x1; // CU_STREAM_NON_BLOCKING
// CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING; INTERPROCESS would hand
// out an IPC handle that outlives the VM's own tables, so it is refused.
constexpr uint64_t kEventFlagsAllowed = 0x3;
} // namespace

CommandResult CommandDispatch::op_NOP(GuestCommand&) { return done(VGPU_SUCCESS); }

CommandResult CommandDispatch::op_INIT(GuestCommand&) { return done(VGPU_SUCCESS, devices_.id()); }

CommandResult CommandDispatch::op_DEVICE_GET_COUNT(GuestCommand&) {
    return done(VGPU_SUCCESS, static_cast<uint64_t>(devices_.count()));
}

// An attribute of a device that exists. Managed memory is the guest
// library's emulation, which needs device memory at guest RAM addresses
// (docs/managed-memory.md): offered where the backend can place it there.
Status CommandDispatch::attribute_of(int device, int attribute, int* out) {
    constexpr int kManagedMemory = 83; // CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
    if (attribute == kManagedMemory) {
        *out = managed_memory_placeable() ? 1 : 0;
        return VGPU_SUCCESS;
    }
    return backend_result(devices_.at(device).device_attribute(attribute, out));
}

CommandResult CommandDispatch::op_DEVICE_GET_ATTRIBUTE(GuestCommand& c) {
    const auto [attribute, device] = args_of<VGPU_OP_DEVICE_GET_ATTRIBUTE>(c);
    if (attribute > INT_MAX) return fail(VGPU_ERROR_INVALID_VALUE, "attribute out of range");
    if (!device_exists(device)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    int v = 0;
    const Status s = attribute_of(static_cast<int>(device), static_cast<int>(attribute), &v);
    return done(s, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

// A block of attributes in one command, each answered as DEVICE_GET_ATTRIBUTE
// would: a runtime reading a device's properties makes one round trip, not
// one an attribute. One the backend refuses has its bit clear.
CommandResult CommandDispatch::op_DEVICE_GET_ATTRIBUTES(GuestCommand& c) {
    static_assert(VGPU_ATTRIBUTES_PER_CALL * sizeof(int32_t) <= VGPU_PAYLOAD_BYTES);
    const auto [device, first] = args_of<VGPU_OP_DEVICE_GET_ATTRIBUTES>(c);
    if (!device_exists(device)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    if (first > INT_MAX - VGPU_ATTRIBUTES_PER_CALL) return fail(VGPU_ERROR_INVALID_VALUE, "attribute out of range");
    c.payload.fill(0);
    uint64_t mask[2] = {0, 0};
    for (uint32_t i = 0; i < VGPU_ATTRIBUTES_PER_CALL; ++i) {
        int v = 0;
        if (attribute_of(static_cast<int>(device), static_cast<int>(first + i), &v) != VGPU_SUCCESS) continue;
        const int32_t value = v;
        std::memcpy(c.payload.data() + i * sizeof value, &value, sizeof value);
        mask[i / 64] |= uint64_t{1} << (i % 64);
    }
    CommandResult r = done(VGPU_SUCCESS, mask[0], mask[1]);
    r.write_payload = true;
    return r;
}

// Asked once: a granule reserved at an address inside guest RAM, given as
// asked or not. The H100 with driver 580 gives none (2026-11-26).
bool CommandDispatch::managed_memory_placeable() {
    if (managed_placeable_ >= 0) return managed_placeable_ == 1;
    managed_placeable_ = 0;
    uint64_t granule = 0, got = 0;
    if (mem_.regions().empty() || vmm_backend().vmm_granularity(&granule) != VGPU_SUCCESS || granule == 0) return false;
    const memmap::Region& r = mem_.regions().back();
    const uint64_t want = (r.base.value + r.size() / 2) / granule * granule;
    if (want < r.base.value || vmm_backend().vmm_reserve(granule, granule, want, &got) != VGPU_SUCCESS) return false;
    vmm_backend().vmm_free_reservation(got, granule);
    managed_placeable_ = got == want ? 1 : 0;
    return managed_placeable_ == 1;
}

CommandResult CommandDispatch::op_DEVICE_GET_NAME(GuestCommand& c) {
    const uint64_t device = args_of<VGPU_OP_DEVICE_GET_NAME>(c).device;
    if (!device_exists(device)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    char name[256] = {};
    const Status s = backend_result(devices_.at(static_cast<int>(device)).device_name(name, sizeof name - 1));
    if (s != VGPU_SUCCESS) return done(s);
    const size_t len = strnlen(name, VGPU_PAYLOAD_BYTES - 1);
    c.payload.fill(0);
    std::memcpy(c.payload.data(), name, len);
    CommandResult r = done(VGPU_SUCCESS, len);
    r.write_payload = true;
    return r;
}

CommandResult CommandDispatch::op_DEVICE_TOTAL_MEM(GuestCommand& c) {
    const uint64_t device = args_of<VGPU_OP_DEVICE_TOTAL_MEM>(c).device;
    if (!device_exists(device)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    uint64_t total = 0;
    const Status s = backend_result(devices_.at(static_cast<int>(device)).device_total_mem(&total));
    return done(s, total); // the GPU's, as the driver says; cuMemGetInfo gives this VM's share
}

CommandResult CommandDispatch::op_CTX_SYNCHRONIZE(GuestCommand&) {
    return done(backend_result(backend().ctx_synchronize()));
}

CommandResult CommandDispatch::op_STREAM_CREATE(GuestCommand& c) {
    const uint64_t flags = args_of<VGPU_OP_STREAM_CREATE>(c).flags;
    if (flags & ~kStreamFlagsAllowed) return fail(VGPU_ERROR_INVALID_VALUE, "unknown stream flags");
    if (streams_.size() >= streams_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "stream table full");
    BackendStream s = 0;
    const Status st = backend_result(backend().stream_create(static_cast<uint32_t>(flags), &s));
    if (st != VGPU_SUCCESS) return done(st);
    return done(VGPU_SUCCESS, *streams_.insert(s, ctx_)); // capacity checked above
}

CommandResult CommandDispatch::op_STREAM_SYNCHRONIZE(GuestCommand& c) {
    BackendStream s;
    if (!stream_of(args_of<VGPU_OP_STREAM_SYNCHRONIZE>(c).handle, &s))
        return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    return done(backend_result(backend().stream_synchronize(s)));
}

CommandResult CommandDispatch::op_STREAM_DESTROY(GuestCommand& c) {
    // Stream 0 is the default stream: it cannot be destroyed.
    auto s = streams_.erase(args_of<VGPU_OP_STREAM_DESTROY>(c).handle, ctx_);
    if (!s) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    settle_capture_graph(*s, false); // a capture it never ended: its graph's handle goes (the driver drops the graph)
    return done(backend_result(backend().stream_destroy(*s)));
}

CommandResult CommandDispatch::op_EVENT_CREATE(GuestCommand& c) {
    const uint64_t flags = args_of<VGPU_OP_EVENT_CREATE>(c).flags;
    if (flags & ~kEventFlagsAllowed) return fail(VGPU_ERROR_INVALID_VALUE, "unknown event flags");
    if (events_.size() + retired_events_.size() >= events_.capacity())
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "event table full"); // retired: still the driver's
    BackendEvent e = 0;
    const Status st = backend_result(backend().event_create(static_cast<uint32_t>(flags), &e));
    if (st != VGPU_SUCCESS) return done(st);
    return done(VGPU_SUCCESS, *events_.insert(e, ctx_));
}

CommandResult CommandDispatch::op_EVENT_RECORD(GuestCommand& c) {
    const auto [event, stream] = args_of<VGPU_OP_EVENT_RECORD>(c);
    const BackendEvent* e = events_.find(event, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "event handle");
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    return done(backend_result(backend().event_record(*e, s)));
}

CommandResult CommandDispatch::op_EVENT_SYNCHRONIZE(GuestCommand& c) {
    const BackendEvent* e = events_.find(args_of<VGPU_OP_EVENT_SYNCHRONIZE>(c).handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "event handle");
    return done(backend_result(backend().event_synchronize(*e)));
}

CommandResult CommandDispatch::op_EVENT_ELAPSED_TIME(GuestCommand& c) {
    const auto [first, second] = args_of<VGPU_OP_EVENT_ELAPSED_TIME>(c);
    const BackendEvent* start = events_.find(first, ctx_);
    const BackendEvent* end = events_.find(second, ctx_);
    if (!start || !end) return fail(VGPU_ERROR_INVALID_HANDLE, "event handle");
    float ms = 0;
    const Status s = backend_result(backend().event_elapsed_ms(*start, *end, &ms));
    uint32_t bits;
    std::memcpy(&bits, &ms, sizeof bits);
    return done(s, bits);
}

CommandResult CommandDispatch::op_EVENT_DESTROY(GuestCommand& c) {
    auto e = events_.erase(args_of<VGPU_OP_EVENT_DESTROY>(c).handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "event handle");
    if (retire_if_in_graph(*e)) return done(VGPU_SUCCESS);
    return done(backend_result(backend().event_destroy(*e)));
}

// Queries: NOT_READY is an answer, not an error, so it is not logged.
CommandResult CommandDispatch::query_result(Status s) {
    if (s != VGPU_ERROR_NOT_READY) return done(s);
    CommandResult r;
    r.status = s;
    return r;
}

CommandResult CommandDispatch::op_STREAM_QUERY(GuestCommand& c) {
    BackendStream s;
    if (!stream_of(args_of<VGPU_OP_STREAM_QUERY>(c).handle, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    return query_result(backend_result(backend().stream_query(s)));
}

CommandResult CommandDispatch::op_EVENT_QUERY(GuestCommand& c) {
    const BackendEvent* e = events_.find(args_of<VGPU_OP_EVENT_QUERY>(c).handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "event handle");
    return query_result(backend_result(backend().event_query(*e)));
}

// flags: cuStreamWaitEvent's; only CU_EVENT_WAIT_DEFAULT (0) exists.
CommandResult CommandDispatch::op_STREAM_WAIT_EVENT(GuestCommand& c) {
    const auto [stream, event, flags] = args_of<VGPU_OP_STREAM_WAIT_EVENT>(c);
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    const BackendEvent* e = events_.find(event, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "event handle");
    if (flags != 0) return fail(VGPU_ERROR_INVALID_VALUE, "unknown wait flags");
    return done(backend_result(backend().stream_wait_event(s, *e)));
}

} // namespace kvmgpu::vgpu
