// HostBackend's scatter-gather copies: one CPU implementation per strategy,
// so each strategy's bookkeeping runs (and is tested) without a GPU.
#include <cstring>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/run_cursor.h"
#include "kvmtool-gpu/devices/vgpu/backends/sg_walk.h"

namespace kvmgpu::vgpu {

Status HostBackend::memcpy_htod_sg(uint64_t dst, std::span<const memmap::HostRun> runs, SgStrategy how,
                                   BackendStream s, bool) {
    return sg_copy(dst, runs, how, s, true);
}

Status HostBackend::memcpy_dtoh_sg(uint64_t src, std::span<const memmap::HostRun> runs, SgStrategy how,
                                   BackendStream s, bool) {
    return sg_copy(src, runs, how, s, false);
}

Status HostBackend::sg_copy(uint64_t dptr, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s,
                            bool htod) {
    if (graphs_.capturing(s)) return VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED; // staging would not outlive the call
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    const uint64_t total = total_bytes(runs);
    if (total == 0) return VGPU_SUCCESS;
    uint8_t* dev = total == UINT64_MAX ? nullptr : translate(dptr, total);
    if (!dev) return VGPU_ERROR_INVALID_VALUE;
    // memmove throughout: the device side may itself be a window onto guest RAM.
    auto copy = [htod](uint8_t* d, uint8_t* host, uint64_t n) {
        if (htod)
            std::memmove(d, host, n);
        else
            std::memmove(host, d, n);
    };

    switch (how) {
    case SgStrategy::PerChunk:
    case SgStrategy::Coalesce: {
        uint64_t off = 0;
        for (const auto& r : runs) copy(dev + off, r.host, r.len), off += r.len;
        return VGPU_SUCCESS;
    }
    case SgStrategy::Bounce: {
        RunCursor cursor(runs);
        for (uint64_t off = 0; off < total;) {
            const uint64_t n = std::min<uint64_t>(bounce_.size(), total - off);
            if (htod) {
                cursor.gather(bounce_.data(), n);
                std::memcpy(dev + off, bounce_.data(), n);
            } else {
                std::memcpy(bounce_.data(), dev + off, n);
                cursor.scatter(bounce_.data(), n);
            }
            off += n;
        }
        return VGPU_SUCCESS;
    }
    case SgStrategy::Batch: {
        // Describe the whole batch first, as cuMemcpyBatchAsync takes it.
        std::vector<uint8_t*> devs, hosts;
        std::vector<uint64_t> sizes;
        uint64_t off = 0;
        for (const auto& r : runs) devs.push_back(dev + off), hosts.push_back(r.host), sizes.push_back(r.len), off += r.len;
        for (size_t i = 0; i < sizes.size(); ++i) copy(devs[i], hosts[i], sizes[i]);
        return VGPU_SUCCESS;
    }
    case SgStrategy::GatherKernel: {
        // Read each run the way the GPU kernel does: through its zero-copy
        // device address, translated back by this backend.
        uint64_t off = 0;
        for (const auto& r : runs) {
            const uint64_t win = guest_ram_device_address(r.host);
            uint8_t* host = win ? translate(win, r.len) : nullptr;
            if (!host) return VGPU_ERROR_NOT_SUPPORTED;
            copy(dev + off, host, r.len);
            off += r.len;
        }
        return VGPU_SUCCESS;
    }
    case SgStrategy::DeviceWalk: break; // takes a list, not runs: memcpy_sg_walk()
    }
    return VGPU_ERROR_INVALID_VALUE;
}

// As the GPU does it: each entry read once and checked against the RAM
// windows (through their zero-copy addresses), the sum against total, and
// only then any byte moved.
Status HostBackend::memcpy_sg_walk(bool htod, uint64_t dptr, const SgWalk& w, BackendStream s, bool) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (w.count == 0 || w.count > VGPU_MAX_SG_ENTRIES || w.total == 0 || w.ram.size() > KVMGPU_WALK_MAX_WINDOWS)
        return VGPU_ERROR_INVALID_VALUE;
    kvmgpu_ram_window win[KVMGPU_WALK_MAX_WINDOWS];
    uint32_t nwin = 0;
    for (const RamRegion& r : w.ram) {
        const uint64_t dev = guest_ram_device_address(r.host);
        if (dev == 0 || translate(dev, r.bytes) != r.host) return VGPU_ERROR_NOT_SUPPORTED;
        win[nwin++] = kvmgpu_ram_window{r.gpa, r.bytes, dev};
    }
    std::vector<memmap::HostRun> runs(w.count);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < w.count; ++i) {
        vgpu_sg_entry e;
        // SAFETY: the device model checked that the list lies in guest RAM.
        std::memcpy(&e, static_cast<const uint8_t*>(w.list) + i * sizeof e, sizeof e);
        const uint64_t at = kvmgpu_walk_entry_address(win, nwin, e.gpa, e.len, w.total);
        uint8_t* host = at ? translate(at, e.len) : nullptr;
        if (!host) return VGPU_ERROR_INVALID_VALUE;
        runs[i] = memmap::HostRun{host, memmap::GuestPhysAddr{e.gpa}, e.len};
        sum += e.len; // each len <= total, 2^20 of them: no overflow
    }
    if (sum != w.total) return VGPU_ERROR_INVALID_VALUE;
    return sg_copy(dptr, runs, SgStrategy::Coalesce, s, htod); // checks the device range too
}

} // namespace kvmgpu::vgpu
