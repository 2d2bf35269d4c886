// Handlers for device memory: allocation, copies (contiguous and
// scatter-gather), memset, and the zero-copy device address of guest RAM.
// Every device range is checked against this VM's allocations and windows,
// every guest range through GuestMemory::translate.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

CommandResult CommandDispatch::op_MEM_ALLOC(GuestCommand& c) {
    const uint64_t bytes = args_of<VGPU_OP_MEM_ALLOC>(c).bytes;
    if (bytes == 0) return fail(VGPU_ERROR_INVALID_VALUE, "zero-byte allocation");
    if (char why[160]; quota_refuses(bytes, why)) return fail(VGPU_ERROR_OUT_OF_MEMORY, why);
    uint64_t dptr = 0;
    const Status s = backend_result(backend().mem_alloc(bytes, &dptr));
    if (s != VGPU_SUCCESS) return done(s);
    if (!allocs_.insert(dptr, bytes, ctx_)) {
        backend().mem_free(dptr); // a backend handing out overlapping ranges is a bug; do not expose it
        return fail(VGPU_ERROR_UNKNOWN, "backend returned an overlapping allocation");
    }
    return done(VGPU_SUCCESS, dptr);
}

// Any context may free the VM's memory (unified addressing): the device
// that allocated it frees it.
CommandResult CommandDispatch::op_MEM_FREE(GuestCommand& c) {
    const uint64_t dptr = args_of<VGPU_OP_MEM_FREE>(c).dptr;
    const int device = device_of(allocs_.owner_of(dptr));
    // A graph allocation a launch left live is freed in stream order; its
    // address stays the graph's (and in the table).
    const bool graph = graph_allocations_.count(dptr) != 0;
    if (!graph && allocs_.erase(dptr) == 0)
        return fail(VGPU_ERROR_INVALID_VALUE, "not the start of an allocation of this VM");
    if (device != selected_device_) devices_.select(device);
    Status s = VGPU_SUCCESS;
    if (!graph) {
        s = backend().mem_free(dptr);
    } else {
        s = graph_backend() ? graph_backend()->free_graph_allocation(0, dptr) : VGPU_ERROR_NOT_SUPPORTED;
        if (s == VGPU_SUCCESS) s = backend().stream_synchronize(0);
    }
    if (device != selected_device_) devices_.select(selected_device_);
    return done(backend_result(s));
}

CommandResult CommandDispatch::op_MEM_GET_INFO(GuestCommand&) {
    uint64_t free_bytes = 0, total = 0;
    const Status s = backend_result(backend().mem_get_info(&free_bytes, &total));
    if (s != VGPU_SUCCESS) return done(s);
    const uint64_t quota_left = allocs_.quota() - allocs_.used();
    return done(VGPU_SUCCESS, std::min(free_bytes, quota_left), std::min(total, allocs_.quota()));
}

// MEMCPY_HTOD: dst a dptr, src a gpa. MEMCPY_DTOH: dst a gpa, src a dptr.
CommandResult CommandDispatch::copy_host(GuestCommand& c) {
    const bool htod = c.desc.opcode == VGPU_OP_MEMCPY_HTOD;
    const auto a = args_of<VGPU_OP_MEMCPY_HTOD, VGPU_OP_MEMCPY_DTOH>(c);
    const uint64_t dptr = htod ? a.dst : a.src, gpa = htod ? a.src : a.dst, bytes = a.bytes;
    BackendStream s;
    if (!stream_of(a.stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (bytes == 0) return done(VGPU_SUCCESS);
    if (!allocs_.contains(dptr, bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "device range not this VM's");
    uint64_t capture = 0;
    uint8_t* host = nullptr;
    if (ram_is_remote() && capturing(s, &capture)) {
        // Recorded: each launch of the graph fetches or sends back these bytes.
        host = guest_view(gpa, bytes);
        if (host) capture_ram_[capture].push_back(GuestRamUse{gpa, bytes, !htod, 0});
    } else {
        host = guest_span(gpa, bytes, htod);
    }
    if (!host) return fail(VGPU_ERROR_INVALID_VALUE, "guest range outside RAM");
    const Status st = backend_result(on_device_of(dptr, s, is_async(c), [&](BackendStream on, bool async) {
        return htod ? backend().memcpy_htod(dptr, host, bytes, on, async) : backend().memcpy_dtoh(host, dptr, bytes, on, async);
    }));
    if (st == VGPU_SUCCESS) VgpuCounters::add(htod ? counters_.bytes_htod : counters_.bytes_dtoh, bytes);
    return done(st);
}

CommandResult CommandDispatch::op_MEMCPY_DTOD(GuestCommand& c) {
    const auto [dst, src, bytes, stream] = args_of<VGPU_OP_MEMCPY_DTOD>(c);
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (bytes == 0) return done(VGPU_SUCCESS);
    if (!allocs_.contains(dst, bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "dst device range not this VM's");
    if (!allocs_.contains(src, bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "src device range not this VM's");
    // Memory of another device (unified addressing): a copy between devices.
    const int dst_device = device_of(allocs_.owner_containing(dst)), src_device = device_of(allocs_.owner_containing(src));
    const Status st = backend_result(dst_device == selected_device_ && src_device == selected_device_
                                         ? backend().memcpy_dtod(dst, src, bytes, s, is_async(c))
                                         : devices_.memcpy_peer(dst_device, dst, src_device, src, bytes, s, is_async(c)));
    if (st == VGPU_SUCCESS) VgpuCounters::add(counters_.bytes_dtod, bytes);
    return done(st);
}

// Each dptr with its context; the stream is the current context's.
// cuMemcpyPeer: both contexts must be live; the ranges must be the VM's, as
// for any copy.
CommandResult CommandDispatch::op_MEMCPY_PEER(GuestCommand& c) {
    const auto [dst, dst_context, src, src_context, bytes, stream] = args_of<VGPU_OP_MEMCPY_PEER>(c);
    const ContextEntry* dst_ctx = contexts_.find(dst_context);
    const ContextEntry* src_ctx = contexts_.find(src_context);
    if (!dst_ctx || !src_ctx) return fail(VGPU_ERROR_INVALID_CONTEXT, "peer copy context handle");
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (bytes == 0) return done(VGPU_SUCCESS);
    if (!allocs_.contains(dst, bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "dst device range not this VM's");
    if (!allocs_.contains(src, bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "src device range not this VM's");
    const Status st = backend_result(devices_.memcpy_peer(static_cast<int>(dst_ctx->device), dst,
                                                          static_cast<int>(src_ctx->device), src, bytes, s,
                                                          is_async(c)));
    if (st == VGPU_SUCCESS) VgpuCounters::add(counters_.bytes_dtod, bytes);
    return done(st);
}

// MEMCPY_HTOD_SG and MEMCPY_DTOH_SG: the device side contiguous, the guest
// side a vgpu_sg_entry list of `count` entries (vgpu_args_memcpy_sg).
CommandResult CommandDispatch::copy_sg(GuestCommand& c) {
    const bool htod = c.desc.opcode == VGPU_OP_MEMCPY_HTOD_SG;
    const auto a = args_of<VGPU_OP_MEMCPY_HTOD_SG, VGPU_OP_MEMCPY_DTOH_SG>(c);
    const uint64_t dptr = a.dptr, list_gpa = a.sg_gpa, count = a.count, total = a.total;
    BackendStream s;
    if (!stream_of(a.stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (a.strategy >= VGPU_SG_STRATEGY_COUNT_) return fail(VGPU_ERROR_INVALID_VALUE, "unknown sg strategy");
    // A captured node must name memory that outlives the call: the
    // strategies' staging buffers and walk scratch do not.
    if (capturing(s)) return fail(VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED, "scatter-gather copy on a capturing stream");
    if (count > VGPU_MAX_SG_ENTRIES) return fail(VGPU_ERROR_INVALID_VALUE, "sg count > VGPU_MAX_SG_ENTRIES");
    if (count == 0) return done(VGPU_SUCCESS);
    const bool auto_pick = a.strategy == VGPU_SG_AUTO;
    SgStrategy how = auto_pick ? backend().auto_sg_strategy(count, total) : static_cast<SgStrategy>(a.strategy - 1);
    if (how == SgStrategy::DeviceWalk && (!auto_pick || total != 0) && !(auto_pick && ram_is_remote()))
        return sg_device_walk(c, a, htod, s);
    // AUTO without a total (or with remote RAM): the host reads the list.
    if (how == SgStrategy::DeviceWalk) how = SgStrategy::GatherKernel;

    if (!read_sg_list(list_gpa, count)) return fail(VGPU_ERROR_INVALID_VALUE, "sg list outside RAM");
    memmap::SgStats stats;
    auto runs = how == SgStrategy::PerChunk ? memmap::translate_each(mem_, sg_list_, &stats)
                                            : memmap::coalesce(mem_, sg_list_, &stats);
    if (!runs) return fail(VGPU_ERROR_INVALID_VALUE, "sg entry empty, outside RAM, or total overflows");
    if (total != 0 && total != stats.total_bytes)
        return fail(VGPU_ERROR_INVALID_VALUE, "sg entries do not sum to the total given");
    if (!sg_ranges_ready(htod)) return fail(VGPU_ERROR_UNKNOWN, "guest RAM out of reach (remote VMM)");
    if (!allocs_.contains(dptr, stats.total_bytes))
        return fail(VGPU_ERROR_INVALID_VALUE, "device range not this VM's");
    VgpuCounters::add(counters_.sg_entries, stats.entries);
    VgpuCounters::add(counters_.sg_runs, runs->size());

    const Status st = backend_result(htod ? backend().memcpy_htod_sg(dptr, *runs, how, s, is_async(c))
                                          : backend().memcpy_dtoh_sg(dptr, *runs, how, s, is_async(c)));
    if (st == VGPU_SUCCESS) VgpuCounters::add(htod ? counters_.bytes_htod : counters_.bytes_dtoh, stats.total_bytes);
    return done(st);
}

bool CommandDispatch::read_sg_list(uint64_t list_gpa, uint64_t count) {
    // count <= VGPU_MAX_SG_ENTRIES (2^20), so the list is at most 16 MiB: no overflow.
    const uint8_t* list = guest_read(list_gpa, count * sizeof(vgpu_sg_entry));
    if (!list) return false;
    sg_list_.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
        vgpu_sg_entry e;
        // SAFETY: entry i lies inside the list span translated above; each is read once.
        std::memcpy(&e, list + i * sizeof e, sizeof e);
        sg_list_[i] = memmap::GuestRange{memmap::GuestPhysAddr{e.gpa}, e.len};
    }
    return true;
}

// VGPU_SG_DEVICE_WALK: O(1) here whatever the list's length. The entries
// stay unread: the backend's device reads and checks them (sg_walk.h).
CommandResult CommandDispatch::sg_device_walk(const GuestCommand& c, const vgpu_args_memcpy_sg& a, bool htod,
                                              BackendStream s) {
    const uint64_t dptr = a.dptr, list_gpa = a.sg_gpa, count = a.count, total = a.total;
    if (total == 0) return fail(VGPU_ERROR_INVALID_VALUE, "device walk needs the entries' total");
    // The GPU reads each entry as one 16-byte load, which must be aligned.
    if (list_gpa % 16 != 0) return fail(VGPU_ERROR_INVALID_VALUE, "sg list not 16-byte aligned");
    if (ram_is_remote()) return fail(VGPU_ERROR_NOT_SUPPORTED, "sg device walk: a remote GPU cannot read guest RAM");
    const uint8_t* list = guest_read(list_gpa, count * sizeof(vgpu_sg_entry)); // count <= 2^20: no overflow
    if (!list) return fail(VGPU_ERROR_INVALID_VALUE, "sg list outside RAM");
    if (!allocs_.contains(dptr, total)) return fail(VGPU_ERROR_INVALID_VALUE, "device range not this VM's");
    if (ram_regions_.empty())
        for (const memmap::Region& r : mem_.regions())
            ram_regions_.push_back(RamRegion{r.base.value, r.size(), r.backing->data()});
    const Status st = backend_result(backend().memcpy_sg_walk(htod, dptr, SgWalk{list, count, total, ram_regions_}, s,
                                                             is_async(c)));
    VgpuCounters::add(counters_.sg_entries, count);
    if (st == VGPU_SUCCESS) VgpuCounters::add(htod ? counters_.bytes_htod : counters_.bytes_dtoh, total);
    return done(st);
}

// MEMSET_D8/D16/D32: dptr aligned to the element, count in elements.
CommandResult CommandDispatch::set_memory(GuestCommand& c) {
    const uint32_t element = c.desc.opcode == VGPU_OP_MEMSET_D32 ? 4 : c.desc.opcode == VGPU_OP_MEMSET_D16 ? 2 : 1;
    const auto [dptr, value, count, stream] = args_of<VGPU_OP_MEMSET_D8, VGPU_OP_MEMSET_D16, VGPU_OP_MEMSET_D32>(c);
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (value >> (8 * element)) return fail(VGPU_ERROR_INVALID_VALUE, "memset value too wide");
    if (dptr % element != 0) return fail(VGPU_ERROR_INVALID_VALUE, "memset dptr not aligned to its element");
    uint64_t bytes;
    if (__builtin_mul_overflow(count, element, &bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "count wraps");
    if (bytes == 0) return done(VGPU_SUCCESS);
    if (!allocs_.contains(dptr, bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "device range not this VM's");
    // Captured by value: C++20 lets a lambda capture structured bindings,
    // clang before 16 does not.
    return done(backend_result(on_device_of(dptr, s, is_async(c),
                                            [&, dptr = dptr, value = value, count = count](BackendStream on, bool async) {
        return backend().memset(dptr, static_cast<uint32_t>(value), element, count, on, async);
    })));
}

CommandResult CommandDispatch::op_GUEST_RAM_DEVICE_PTR(GuestCommand& c) {
    const auto [gpa, bytes] = args_of<VGPU_OP_GUEST_RAM_DEVICE_PTR>(c);
    if (ram_is_remote()) return fail(VGPU_ERROR_NOT_SUPPORTED, "device address of guest RAM: a remote GPU cannot reach it");
    const uint8_t* host = guest_read(gpa, bytes);
    if (!host) return fail(VGPU_ERROR_INVALID_VALUE, "guest range outside RAM (or empty)");
    const uint64_t dev = backend().guest_ram_device_address(host);
    if (dev == 0) return fail(VGPU_ERROR_NOT_SUPPORTED, "guest RAM is not device-mapped");
    // Kernels will reach these bytes through the address: registered now.
    if (const Status s = backend_result(devices_.prepare_guest_ram(host, bytes)); s != VGPU_SUCCESS)
        return done(s);
    return done(VGPU_SUCCESS, dev);
}

CommandResult CommandDispatch::op_MEMCPY_HTOD(GuestCommand& c) { return copy_host(c); }
CommandResult CommandDispatch::op_MEMCPY_DTOH(GuestCommand& c) { return copy_host(c); }

CommandResult CommandDispatch::op_MEMCPY_HTOD_SG(GuestCommand& c) { return copy_sg(c); }
CommandResult CommandDispatch::op_MEMCPY_DTOH_SG(GuestCommand& c) { return copy_sg(c); }

CommandResult CommandDispatch::op_MEMSET_D8(GuestCommand& c) { return set_memory(c); }
CommandResult CommandDispatch::op_MEMSET_D32(GuestCommand& c) { return set_memory(c); }
CommandResult CommandDispatch::op_MEMSET_D16(GuestCommand& c) { return set_memory(c); }

} // namespace kvmgpu::vgpu

namespace kvmgpu::vgpu {

// MEMSET_2D_D8/D16/D32: height rows of width elements from dptr, pitch bytes
// apart. Every row lies in this VM's memory: the whole span from the first
// row's start to the last row's end is one allocation's, so no row reaches
// past it whatever the pitch.
CommandResult CommandDispatch::set_memory_2d(GuestCommand& c) {
    const uint32_t element = c.desc.opcode == VGPU_OP_MEMSET_2D_D32 ? 4 : c.desc.opcode == VGPU_OP_MEMSET_2D_D16 ? 2 : 1;
    const auto a = args_of<VGPU_OP_MEMSET_2D_D8, VGPU_OP_MEMSET_2D_D16, VGPU_OP_MEMSET_2D_D32>(c);
    BackendStream s;
    if (!stream_of(a.stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (a.value >> (8 * element)) return fail(VGPU_ERROR_INVALID_VALUE, "memset value too wide");
    if (a.dptr % element != 0 || a.pitch % element != 0)
        return fail(VGPU_ERROR_INVALID_VALUE, "2-D memset dptr or pitch not aligned to its element");
    uint64_t row_bytes, span;
    if (__builtin_mul_overflow(a.width, element, &row_bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "width wraps");
    if (row_bytes == 0 || a.height == 0) return done(VGPU_SUCCESS);
    if (a.pitch < row_bytes) return fail(VGPU_ERROR_INVALID_VALUE, "2-D memset pitch below its row");
    if (__builtin_mul_overflow(a.height - 1, a.pitch, &span) || __builtin_add_overflow(span, row_bytes, &span))
        return fail(VGPU_ERROR_INVALID_VALUE, "2-D memset span wraps");
    if (!allocs_.contains(a.dptr, span)) return fail(VGPU_ERROR_INVALID_VALUE, "device range not this VM's");
    return done(backend_result(on_device_of(a.dptr, s, is_async(c), [&](BackendStream on, bool async) {
        return backend().memset_2d(a.dptr, a.pitch, static_cast<uint32_t>(a.value), element, a.width, a.height, on,
                                   async);
    })));
}

CommandResult CommandDispatch::op_MEMSET_2D_D8(GuestCommand& c) { return set_memory_2d(c); }
CommandResult CommandDispatch::op_MEMSET_2D_D16(GuestCommand& c) { return set_memory_2d(c); }
CommandResult CommandDispatch::op_MEMSET_2D_D32(GuestCommand& c) { return set_memory_2d(c); }

} // namespace kvmgpu::vgpu
