// Handlers for graph memory (vgpu_ops.h, 412-416): allocation and free
// nodes, and cuMemAllocAsync/cuMemFreeAsync on a capturing stream. A graph
// allocation's address is fixed when its node is made and stays the VM's
// (named by later copies and nodes, counted against its quota) until no
// graph, exec or open capture holds the node, as the driver keeps it
// reserved; which launches have it backed is the driver's business.
#include <cstdio>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
// CUgraphMem_attribute: the VM's graph allocations serve as both the used
// and the reserved figures (what the driver backs at a moment is its own,
// and in a shared process other VMs' too).
constexpr uint64_t kUsedCurrent = 0, kUsedHigh = 1, kReservedCurrent = 2, kReservedHigh = 3;
} // namespace

bool CommandDispatch::quota_refuses(uint64_t bytes, char (&why)[160]) const {
    if (allocs_.can_reserve(bytes)) return false;
    if (allocs_.count() >= allocs_.max_count())
        std::snprintf(why, sizeof why, "refused: the VM holds its maximum of %llu allocations",
                      static_cast<unsigned long long>(allocs_.max_count()));
    else
        std::snprintf(why, sizeof why, "%llu bytes refused by the VM's device-memory quota (%llu of %llu bytes in use)",
                      static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(allocs_.used()),
                      static_cast<unsigned long long>(allocs_.quota()));
    return true;
}

bool CommandDispatch::add_graph_allocation(uint64_t dptr, uint64_t bytes) {
    // The driver gives an address again to a graph allocation whose lifetime
    // cannot overlap the first's (one freed earlier in the same graph or
    // capture): one range of the VM's, held by both.
    if (auto it = graph_allocations_.find(dptr); it != graph_allocations_.end() && it->second.ctx == ctx_) {
        if (bytes > it->second.bytes) {
            allocs_.erase(dptr);
            if (!allocs_.insert(dptr, bytes, ctx_)) {
                allocs_.insert(dptr, it->second.bytes, ctx_);
                return false;
            }
            it->second.bytes = bytes;
        }
        ++it->second.holders;
        return true;
    }
    if (!allocs_.insert(dptr, bytes, ctx_)) return false;
    graph_allocations_[dptr] = GraphAllocation{bytes, 1, ctx_};
    const int device = device_of(ctx_);
    graph_memory_high_[device] = std::max(graph_memory_high_[device], graph_allocation_bytes(device));
    return true;
}

void CommandDispatch::hold_graph_allocations(const std::vector<uint64_t>& dptrs) {
    for (uint64_t d : dptrs)
        if (auto it = graph_allocations_.find(d); it != graph_allocations_.end()) ++it->second.holders;
}

void CommandDispatch::drop_graph_allocations(const std::vector<uint64_t>& dptrs) {
    for (uint64_t d : dptrs) {
        auto it = graph_allocations_.find(d);
        if (it == graph_allocations_.end() || --it->second.holders > 0) continue;
        allocs_.erase(d);
        if (GraphBackend* gb = graph_backend()) gb->release_graph_allocation(d);
        graph_allocations_.erase(it);
    }
}

void CommandDispatch::end_capture_allocations(uint64_t capture_id, GraphEntry* graph) {
    auto it = capture_allocations_.find(capture_id);
    if (it == capture_allocations_.end()) return;
    if (graph)
        graph->allocations = std::move(it->second); // the capture's holds become the graph's
    else
        drop_graph_allocations(it->second);
    capture_allocations_.erase(it);
}

bool CommandDispatch::graph_allocation_here(uint64_t dptr) {
    const auto it = graph_allocations_.find(dptr);
    return it != graph_allocations_.end() && device_of(it->second.ctx) == device_of(ctx_);
}

uint64_t CommandDispatch::graph_allocation_bytes(int device) {
    uint64_t bytes = 0;
    for (const auto& [dptr, a] : graph_allocations_)
        if (device_of(a.ctx) == device) bytes += a.bytes;
    return bytes;
}

// A capturing stream, bytes -> the allocation's address.
CommandResult CommandDispatch::op_MEM_ALLOC_CAPTURED(GuestCommand& c) {
    GraphBackend* gb = graph_backend();
    if (!gb) return fail(VGPU_ERROR_NOT_SUPPORTED, "this backend has no CUDA graphs");
    const auto [stream, bytes] = args_of<VGPU_OP_MEM_ALLOC_CAPTURED>(c);
    BackendStream s;
    if (stream == 0 || !stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (bytes == 0) return fail(VGPU_ERROR_INVALID_VALUE, "zero-byte allocation");
    uint32_t status = kCaptureNone;
    uint64_t id = 0;
    if (gb->capture_status(s, &status, &id) != VGPU_SUCCESS || status != kCaptureActive)
        return fail(VGPU_ERROR_INVALID_VALUE, "the stream is not capturing");
    if (char why[160]; quota_refuses(bytes, why)) return fail(VGPU_ERROR_OUT_OF_MEMORY, why);
    uint64_t dptr = 0;
    const Status st = backend_result(gb->alloc_in_capture(s, bytes, &dptr));
    if (st != VGPU_SUCCESS) return done(st);
    if (!add_graph_allocation(dptr, bytes)) return fail(VGPU_ERROR_UNKNOWN, "backend returned an overlapping allocation");
    capture_allocations_[id].push_back(dptr);
    capture_of_stream_[s] = id; // a stream joined to the capture
    return done(VGPU_SUCCESS, dptr);
}

// A graph allocation freed on a stream: in a capture, its free node.
CommandResult CommandDispatch::op_MEM_FREE_GRAPH_ALLOCATION(GuestCommand& c) {
    GraphBackend* gb = graph_backend();
    if (!gb) return fail(VGPU_ERROR_NOT_SUPPORTED, "this backend has no CUDA graphs");
    const auto [stream, dptr] = args_of<VGPU_OP_MEM_FREE_GRAPH_ALLOCATION>(c);
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (!graph_allocation_here(dptr))
        return fail(VGPU_ERROR_INVALID_VALUE, "not a graph allocation of this VM on this device");
    Status st = backend_result(gb->free_graph_allocation(s, dptr));
    uint32_t status = kCaptureNone;
    uint64_t id = 0;
    const bool captured = gb->capture_status(s, &status, &id) == VGPU_SUCCESS && status != kCaptureNone;
    if (st == VGPU_SUCCESS && !captured && !is_async(c)) st = backend_result(backend().stream_synchronize(s));
    return done(st);
}

// A graph, bytes -> the node, the allocation's address.
CommandResult CommandDispatch::op_GRAPH_ADD_MEM_ALLOC_NODE(GuestCommand& c) {
    const auto [graph, bytes] = args_of<VGPU_OP_GRAPH_ADD_MEM_ALLOC_NODE>(c);
    if (bytes == 0) return fail(VGPU_ERROR_INVALID_VALUE, "zero-byte allocation");
    if (char why[160]; quota_refuses(bytes, why)) return fail(VGPU_ERROR_OUT_OF_MEMORY, why);
    GraphNodeSpec spec;
    spec.kind = GraphNodeSpec::Kind::MemAlloc;
    spec.bytes = bytes;
    return add_graph_node(graph, spec);
}

CommandResult CommandDispatch::op_GRAPH_ADD_MEM_FREE_NODE(GuestCommand& c) {
    const auto [graph, dptr] = args_of<VGPU_OP_GRAPH_ADD_MEM_FREE_NODE>(c);
    if (!graph_allocation_here(dptr))
        return fail(VGPU_ERROR_INVALID_VALUE, "not a graph allocation of this VM on this device");
    GraphNodeSpec spec;
    spec.kind = GraphNodeSpec::Kind::MemFree;
    spec.dst = dptr;
    return add_graph_node(graph, spec);
}

// A device, CUgraphMem_attribute, set (the high marks only, to 0) -> value.
CommandResult CommandDispatch::op_GRAPH_MEM_ATTRIBUTE(GuestCommand& c) {
    const auto [device, attribute, set, value] = args_of<VGPU_OP_GRAPH_MEM_ATTRIBUTE>(c);
    if (!device_exists(device)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    if (attribute > kReservedHigh || set > 1) return fail(VGPU_ERROR_INVALID_VALUE, "graph memory attribute");
    const int d = static_cast<int>(device);
    const bool high = attribute == kUsedHigh || attribute == kReservedHigh;
    const uint64_t now = graph_allocation_bytes(d);
    if (set) {
        if (!high || value != 0) return fail(VGPU_ERROR_INVALID_VALUE, "only a high mark is set, and only to 0");
        graph_memory_high_[d] = now;
        return done(VGPU_SUCCESS, 0);
    }
    static_assert(kUsedCurrent == 0 && kReservedCurrent == 2);
    return done(VGPU_SUCCESS, high ? std::max(graph_memory_high_[d], now) : now);
}

} // namespace kvmgpu::vgpu
