// Handlers for occupancy, context limits and P2P attributes: questions the
// guest cannot answer itself (a kernel's registers are the driver's), and
// limits whose device memory counts against the VM's quota.
#include <algorithm>
#include <climits>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
constexpr int kAttrMultiprocessors = 16;          // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrThreadsPerMultiprocessor = 39; // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
constexpr int kAttrMaxPersistingL2 = 108;         // CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE
constexpr uint64_t kOccupancyFlags = 0x1;         // CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE
// What a pending device-runtime launch is charged: the driver reserves room
// for each (its record and parameters) and says nothing of the size; this
// bounds it from above (4 KiB parameters, the launch record).
constexpr uint64_t kPendingLaunchBytes = 8 << 10;

bool costs_memory(uint32_t limit) {
    return limit == VGPU_LIMIT_STACK_SIZE || limit == VGPU_LIMIT_PRINTF_FIFO_SIZE ||
           limit == VGPU_LIMIT_MALLOC_HEAP_SIZE || limit == VGPU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT;
}
} // namespace

// A block no GPU runs (over 1024 threads, over 4 GiB of shared memory)
// fits 0 times, as the driver answers for one over the kernel's limits.
CommandResult CommandDispatch::op_FUNC_OCCUPANCY(GuestCommand& c) {
    const auto [function, block, shared, flags] = args_of<VGPU_OP_FUNC_OCCUPANCY>(c);
    const FunctionEntry* f = functions_.find(function, ctx_);
    if (!f) return fail(VGPU_ERROR_INVALID_HANDLE, "function handle");
    if (block == 0 || block > INT_MAX) return fail(VGPU_ERROR_INVALID_VALUE, "occupancy block size 0 or past INT_MAX");
    if (flags & ~kOccupancyFlags) return fail(VGPU_ERROR_INVALID_VALUE, "unknown occupancy flags");
    if (block > 1024 || shared > UINT32_MAX) return done(VGPU_SUCCESS, 0);
    int n = 0;
    const Status s = backend_result(backend().occupancy(f->function, static_cast<uint32_t>(block), shared,
                                                       static_cast<uint32_t>(flags), &n));
    return done(s, static_cast<uint64_t>(std::max(n, 0)));
}

// The counts are ints' bits, passed on as the guest's ints: the driver
// answers zero, negative and too large counts as it does natively.
CommandResult CommandDispatch::op_FUNC_AVAILABLE_SHARED(GuestCommand& c) {
    const auto [function, blocks, block] = args_of<VGPU_OP_FUNC_AVAILABLE_SHARED>(c);
    const FunctionEntry* f = functions_.find(function, ctx_);
    if (!f) return fail(VGPU_ERROR_INVALID_HANDLE, "function handle");
    if (blocks > UINT32_MAX || block > UINT32_MAX) return fail(VGPU_ERROR_INVALID_VALUE, "counts past 32 bits");
    uint64_t bytes = 0;
    const Status s = backend_result(backend().available_shared(f->function, static_cast<int32_t>(blocks),
                                                               static_cast<int32_t>(block), &bytes));
    return done(s, bytes);
}

CommandResult CommandDispatch::cluster_question(GuestCommand& c, bool active) {
    const auto a = args_of<VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, VGPU_OP_FUNC_MAX_CLUSTER_SIZE>(c);
    const FunctionEntry* f = functions_.find(a.function, ctx_);
    if (!f) return fail(VGPU_ERROR_INVALID_HANDLE, "function handle");
    ClusterShape shape{.grid = {a.grid[0], a.grid[1], a.grid[2]},
                       .block = {a.block[0], a.block[1], a.block[2]},
                       .shared_bytes = a.shared_bytes};
    if (!shape.grid.x || !shape.grid.y || !shape.grid.z || !shape.block.x || !shape.block.y || !shape.block.z ||
        !launch_dims_ok(shape.grid, shape.block))
        return fail(VGPU_ERROR_INVALID_VALUE, "cluster occupancy: grid or block beyond the limits");
    // All three zero: no cluster attribute, the kernel's own size.
    if (active && (a.cluster[0] | a.cluster[1] | a.cluster[2])) {
        shape.has_cluster = true;
        shape.cluster = Dim3{a.cluster[0], a.cluster[1], a.cluster[2]};
        if (!cluster_size_ok(shape.cluster, VGPU_MAX_CLUSTER_BLOCKS))
            return fail(VGPU_ERROR_INVALID_CLUSTER_SIZE, "cluster occupancy: cluster size");
    }
    int n = 0;
    const Status s = backend_result(active ? backend().max_active_clusters(f->function, shape, &n)
                                           : backend().max_cluster_size(f->function, shape, &n));
    return done(s, static_cast<uint64_t>(std::max(n, 0)));
}

CommandResult CommandDispatch::op_FUNC_MAX_ACTIVE_CLUSTERS(GuestCommand& c) { return cluster_question(c, true); }
CommandResult CommandDispatch::op_FUNC_MAX_CLUSTER_SIZE(GuestCommand& c) { return cluster_question(c, false); }

uint64_t CommandDispatch::limit_cost(uint32_t limit, uint64_t value, uint64_t start) {
    if (!costs_memory(limit) || value <= start) return 0;
    uint64_t per = value - start, threads = 1;
    if (limit == VGPU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT) threads = kPendingLaunchBytes; // a launch's room
    if (limit == VGPU_LIMIT_STACK_SIZE) {
        // Every thread the device can hold gets the stack: the driver reserves it up front.
        int sms = 0, per_sm = 0;
        if (backend().device_attribute(kAttrMultiprocessors, &sms) != VGPU_SUCCESS ||
            backend().device_attribute(kAttrThreadsPerMultiprocessor, &per_sm) != VGPU_SUCCESS)
            return UINT64_MAX;
        threads = static_cast<uint64_t>(std::max(sms, 1)) * static_cast<uint64_t>(std::max(per_sm, 1));
    }
    uint64_t bytes = 0;
    return __builtin_mul_overflow(per, threads, &bytes) ? UINT64_MAX : bytes;
}

// Charges (or gives back) the difference between a limit's cost now and
// `cost`; false, changing nothing, past the quota.
bool CommandDispatch::recharge(LimitState& st, uint64_t cost) {
    if (cost > st.charged && !allocs_.charge(cost - st.charged)) return false;
    if (cost < st.charged) allocs_.uncharge(st.charged - cost);
    st.charged = cost;
    return true;
}

// A CUlimit's value, set when `set` is 1, else read (vgpu_abi.h, VGPU_LIMIT_*).
CommandResult CommandDispatch::op_CTX_LIMIT(GuestCommand& c) {
    const auto [limit, value, set] = args_of<VGPU_OP_CTX_LIMIT>(c);
    if (set > 1) return fail(VGPU_ERROR_INVALID_VALUE, "CTX_LIMIT set is neither get (0) nor set (1)");
    if (limit >= VGPU_LIMIT_COUNT_) return fail(VGPU_ERROR_UNSUPPORTED_LIMIT, "limit not offered");
    const auto lim = static_cast<uint32_t>(limit);
    const std::pair<int, uint32_t> key{selected_device_, lim};
    if (lim == VGPU_LIMIT_PERSISTING_L2_CACHE_SIZE) {
        // L2 set aside on a GPU other VMs share: a hint, kept here.
        if (!set) {
            const auto it = limits_.find(key);
            return done(VGPU_SUCCESS, it == limits_.end() ? 0 : it->second.hint);
        }
        int max = 0;
        if (backend().device_attribute(kAttrMaxPersistingL2, &max) != VGPU_SUCCESS) max = 0;
        limits_[key].hint = std::min<uint64_t>(value, static_cast<uint64_t>(std::max(max, 0)));
        return done(VGPU_SUCCESS, limits_[key].hint);
    }
    uint64_t now = 0;
    if (!set) {
        const Status s = backend_result(backend().get_limit(static_cast<int>(lim), &now));
        return done(s, now);
    }
    // Dynamic parallelism's pending launches cost memory, charged above; the
    // synchronization depth is gone from devices of compute capability 9.0 on.
    if (lim == VGPU_LIMIT_DEV_RUNTIME_SYNC_DEPTH)
        return fail(VGPU_ERROR_UNSUPPORTED_LIMIT, "the device-runtime synchronization depth cannot be set");
    if (lim >= VGPU_LIMIT_SHMEM_SIZE)
        return fail(VGPU_ERROR_UNSUPPORTED_LIMIT, "CUDA-in-graphics limits cannot be set (not such a context)");
    LimitState& st = limits_[key];
    if (!st.known) {
        const Status s = backend_result(backend().get_limit(static_cast<int>(lim), &st.start));
        if (s != VGPU_SUCCESS) {
            limits_.erase(key);
            return done(s);
        }
        st.known = true;
    }
    const uint64_t before = st.charged;
    if (!recharge(st, limit_cost(lim, value, st.start)))
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "the limit's device memory is past the VM's quota");
    Status s = backend_result(backend().set_limit(static_cast<int>(lim), value));
    if (s == VGPU_SUCCESS) s = backend_result(backend().get_limit(static_cast<int>(lim), &now));
    if (s != VGPU_SUCCESS) {
        if (limits_.count(key)) recharge(st, before); // gives back: cannot fail (a recovery forgot it all)
        return done(s);
    }
    // The driver may round up: charge what it holds.
    if (!recharge(st, limit_cost(lim, now, st.start))) {
        backend().set_limit(static_cast<int>(lim), st.start);
        recharge(st, 0);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "the limit's device memory (as the driver rounded it) is past the quota");
    }
    return done(VGPU_SUCCESS, now);
}

// Every limit the guest set goes back to its start value on its device.
void CommandDispatch::restore_limits() {
    for (const auto& [key, st] : limits_) {
        if (!st.known || devices_.select(key.first) != VGPU_SUCCESS) continue;
        backend().set_limit(static_cast<int>(key.second), st.start);
    }
    devices_.select(selected_device_);
    limits_.clear(); // the charges go with the allocation table's
}

// A CUdevice_P2PAttribute (1..5) of a device towards a peer device.
CommandResult CommandDispatch::op_DEVICE_P2P_ATTRIBUTE(GuestCommand& c) {
    const auto [attr, device, peer] = args_of<VGPU_OP_DEVICE_P2P_ATTRIBUTE>(c);
    if (attr < 1 || attr > 5) return fail(VGPU_ERROR_INVALID_VALUE, "unknown P2P attribute");
    if (!device_exists(device) || !device_exists(peer)) return fail(VGPU_ERROR_INVALID_DEVICE, "no such device");
    int v = 0;
    const Status s = backend_result(
        devices_.p2p_attribute(static_cast<int>(attr), static_cast<int>(device), static_cast<int>(peer), &v));
    return done(s, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

} // namespace kvmgpu::vgpu
