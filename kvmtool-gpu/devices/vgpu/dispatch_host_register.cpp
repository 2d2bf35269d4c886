// Handlers for registering guest buffers (cuMemHostRegister on memory the
// guest already has). A buffer of one contiguous run of guest RAM needs
// no alias: its part of guest RAM is registered (if lazily, now), and the
// RAM's window gives the device address. A scattered one gets a host-virtual alias (HostAlias) of
// its pages, one mapping per run, which the backend registers, so kernels
// reach the pages through one device address. Guest RAM on huge host pages
// cannot be aliased page by page: such a scattered buffer has no device
// address, and its copies go as any pageable buffer's (the device walk).
// Each registration counts against the VM's limits (vgpu_options.h,
// docs/security.md), and gives back what it counted when it goes.
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

#include <algorithm>

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kRegisterFlags = 0x1 | 0x2 | 0x8; // PORTABLE, DEVICEMAP, READ_ONLY

// What the driver spends on device memory to map a registered alias,
// charged against the VM's quota. Measured on the H100 (2026-11-25): 4,000
// registrations of a VM's RAM took 62 MiB, 15.5 KiB each; charged at
// 64 KiB, plus 8 bytes per 4 KiB page for the GPU's page tables.
uint64_t driver_charge(uint64_t bytes) { return (64ull << 10) + bytes / 512; }
} // namespace

// A vgpu_sg_entry list of `count` entries summing to `total`. Every limit
// refuses with OUT_OF_MEMORY, as cuMemHostRegister does when it cannot pin.
CommandResult CommandDispatch::op_HOST_REGISTER(GuestCommand& c) {
    const auto [list_gpa, count, total, flags] = args_of<VGPU_OP_HOST_REGISTER>(c);
    if (flags & ~kRegisterFlags) return fail(VGPU_ERROR_INVALID_VALUE, "unknown registration flags");
    if (ram_is_remote()) return fail(VGPU_ERROR_NOT_SUPPORTED, "registered guest memory: a remote GPU cannot reach guest RAM");
    if (count == 0 || count > VGPU_MAX_SG_ENTRIES) return fail(VGPU_ERROR_INVALID_VALUE, "sg count 0 or too large");
    if (registrations_.size() >= std::min(registrations_.capacity(), opts_.max_registrations))
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "registration limit reached (max_registrations)");
    if (!read_sg_list(list_gpa, count)) return fail(VGPU_ERROR_INVALID_VALUE, "sg list outside RAM");
    memmap::SgStats stats;
    // Pieces contiguous in host memory merge: one mapping each run.
    auto runs = memmap::coalesce(mem_, sg_list_, &stats);
    if (!runs) return fail(VGPU_ERROR_INVALID_VALUE, "sg entry empty, outside RAM, or total overflows");
    if (total != stats.total_bytes) return fail(VGPU_ERROR_INVALID_VALUE, "sg entries do not sum to the total given");
    if (total > registered_bytes_limit_ - registered_bytes_)
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "registered bytes would pass the VM's limit (max_registered_bytes)");
    Registration reg;
    reg.bytes = total;
    // One run of guest RAM: its window is the address, once its pages are registered.
    if (runs->size() == 1 && backend().guest_ram_device_address(runs->front().host) != 0) {
        if (const Status s = backend_result(devices_.prepare_guest_ram(runs->front().host, total)); s != VGPU_SUCCESS)
            return done(s);
        reg.dptr = backend().guest_ram_device_address(runs->front().host);
    }
    // Else an alias, if every piece is on 4 KiB host pages.
    bool small_pages = true;
    for (const auto& r : *runs)
        for (const memmap::Region& region : mem_.regions())
            if (r.host >= region.backing->data() && r.host < region.backing->data() + region.size())
                small_pages &= region.backing->page_size() == memmap::PageSize::k4K;
    if (!reg.dptr && small_pages) {
        if (runs->size() > alias_allowance_ - alias_mappings_)
            return fail(VGPU_ERROR_OUT_OF_MEMORY, "the alias would pass the VM's host mappings (max_alias_mappings)");
        reg.charge = driver_charge(total);
        if (!allocs_.charge(reg.charge))
            return fail(VGPU_ERROR_OUT_OF_MEMORY, "the driver's mapping cost would pass the device-memory quota");
        std::string why;
        auto alias = HostAlias::make(*runs, &why);
        if (!alias) {
            allocs_.uncharge(reg.charge);
            return fail(VGPU_ERROR_INVALID_VALUE, ("no alias of the buffer: " + why).c_str());
        }
        const Status s = backend_result(devices_.register_guest_ram(alias->mapping(), alias->mapping_bytes()));
        if (s != VGPU_SUCCESS) {
            allocs_.uncharge(reg.charge);
            return done(s);
        }
        reg.dptr = backend().guest_ram_device_address(alias->data());
        reg.mappings = runs->size();
        reg.alias = std::move(alias);
    } else if (!reg.dptr && log_limit_.allow()) {
        log_info("vgpu: a registered guest buffer on huge host pages has no 4 KiB alias: no device address; "
                 "its copies go as any pageable buffer's");
    }
    const auto h = registrations_.insert(reg); // capacity checked above
    alias_mappings_ += reg.mappings;
    registered_bytes_ += reg.bytes;
    if (reg.alias) allocs_.add_global(reg.dptr, reg.alias->bytes(), static_cast<uintptr_t>(*h)); // the VM's while registered
    return done(VGPU_SUCCESS, *h, reg.dptr);
}

void CommandDispatch::forget_registration(const Registration& r) {
    alias_mappings_ -= r.mappings;
    registered_bytes_ -= r.bytes;
    allocs_.uncharge(r.charge);
}

CommandResult CommandDispatch::op_HOST_UNREGISTER(GuestCommand& c) {
    const uint64_t handle = args_of<VGPU_OP_HOST_UNREGISTER>(c).handle;
    auto reg = registrations_.erase(handle);
    if (!reg) return fail(VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED, "registration handle");
    allocs_.drop_globals_of(static_cast<uintptr_t>(handle));
    forget_registration(*reg);
    if (!reg->alias) return done(VGPU_SUCCESS);
    // Queued work may still read the buffer through the alias (unmapped when reg goes).
    backend_result(backend().ctx_synchronize());
    return done(backend_result(devices_.unregister_guest_ram(reg->alias->mapping())));
}

void CommandDispatch::unregister_all() {
    registrations_.for_each([&](uint64_t h, Registration& r) {
        allocs_.drop_globals_of(static_cast<uintptr_t>(h));
        if (r.alias) devices_.unregister_guest_ram(r.alias->mapping());
        forget_registration(r);
    });
    registrations_.clear(); // unmaps the aliases
}

} // namespace kvmgpu::vgpu
