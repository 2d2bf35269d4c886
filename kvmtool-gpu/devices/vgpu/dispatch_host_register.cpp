// Handlers for registering guest buffers (cuMemHostRegister on memory the
// guest already has): the buffer's guest pages get a host-virtual alias
// (HostAlias), which the backend registers, so kernels reach the scattered
// pages through one device address. Guest RAM on huge host pages cannot be
// aliased page by page: such a registration has no device address, and its
// copies go as any pageable buffer's (the device walk).
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kRegisterFlags = 0x1 | 0x2 | 0x8; // PORTABLE, DEVICEMAP, READ_ONLY
} // namespace

// arg0 list gpa, arg1 entries, arg2 their total, arg3 flags.
CommandResult CommandDispatch::op_host_register(GuestCommand& c) {
    const uint64_t list_gpa = c.desc.arg[0], count = c.desc.arg[1], total = c.desc.arg[2];
    if (c.desc.arg[3] & ~kRegisterFlags) return fail(VGPU_ERROR_INVALID_VALUE, "unknown registration flags");
    if (count == 0 || count > VGPU_MAX_SG_ENTRIES) return fail(VGPU_ERROR_INVALID_VALUE, "sg count 0 or too large");
    if (registrations_.size() >= registrations_.capacity())
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "registration table full");
    if (!read_sg_list(list_gpa, count)) return fail(VGPU_ERROR_INVALID_VALUE, "sg list outside RAM");
    memmap::SgStats stats;
    auto runs = memmap::translate_each(mem_, sg_list_, &stats);
    if (!runs) return fail(VGPU_ERROR_INVALID_VALUE, "sg entry empty, outside RAM, or total overflows");
    if (total != stats.total_bytes) return fail(VGPU_ERROR_INVALID_VALUE, "sg entries do not sum to the total given");
    // Every piece on 4 KiB host pages, or no alias at all.
    bool small_pages = true;
    for (const auto& r : *runs)
        for (const memmap::Region& region : mem_.regions())
            if (r.host >= region.backing->data() && r.host < region.backing->data() + region.size())
                small_pages &= region.backing->page_size() == memmap::PageSize::k4K;
    Registration reg;
    if (small_pages) {
        std::string why;
        auto alias = HostAlias::make(*runs, &why);
        if (!alias) return fail(VGPU_ERROR_INVALID_VALUE, ("no alias of the buffer: " + why).c_str());
        const Status s = backend_result(backend_.register_guest_ram(alias->mapping(), alias->mapping_bytes()));
        if (s != VGPU_SUCCESS) return done(s);
        reg.dptr = backend_.guest_ram_device_address(alias->data());
        reg.alias = std::move(alias);
    } else if (log_limit_.allow()) {
        log_info("vgpu: a registered guest buffer on huge host pages has no 4 KiB alias: no device address; "
                 "its copies go as any pageable buffer's");
    }
    const uint64_t dptr = reg.dptr, bytes = reg.alias ? reg.alias->bytes() : 0;
    const auto h = registrations_.insert(reg); // capacity checked above
    if (dptr) allocs_.add_global(dptr, bytes, static_cast<uintptr_t>(*h)); // the VM's device memory while registered
    return done(VGPU_SUCCESS, *h, dptr);
}

CommandResult CommandDispatch::op_host_unregister(GuestCommand& c) {
    auto reg = registrations_.erase(c.desc.arg[0]);
    if (!reg) return fail(VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED, "registration handle");
    allocs_.drop_globals_of(static_cast<uintptr_t>(c.desc.arg[0]));
    if (!reg->alias) return done(VGPU_SUCCESS);
    // Queued work may still read the buffer through the alias.
    backend_result(backend_.ctx_synchronize());
    return done(backend_result(backend_.unregister_guest_ram(reg->alias->mapping())));
}

void CommandDispatch::unregister_all() {
    registrations_.for_each([&](uint64_t h, Registration& r) {
        allocs_.drop_globals_of(static_cast<uintptr_t>(h));
        if (r.alias) backend_.unregister_guest_ram(r.alias->mapping());
    });
    registrations_.clear();
}

} // namespace kvmgpu::vgpu
