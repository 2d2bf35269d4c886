#include "kvmtool-gpu/remote/guest_ram_copy.h"

#include <cstring>
#include <stdexcept>
#include <system_error>

namespace kvmgpu::remote {

std::unique_ptr<GuestRamCopy> GuestRamCopy::create(UcxLink& link, uint32_t regions, const std::vector<uint8_t>& body,
                                                   uint64_t max_bytes, std::string* why) {
    if (regions == 0 || regions > kMaxRemoteRegions || body.size() < uint64_t{regions} * sizeof(WireRegion)) {
        *why = "region table malformed";
        return nullptr;
    }
    std::unique_ptr<GuestRamCopy> copy(new GuestRamCopy(link));
    size_t keys_at = regions * sizeof(WireRegion);
    uint64_t total = 0;
    for (uint32_t i = 0; i < regions; ++i) {
        WireRegion w;
        std::memcpy(&w, body.data() + i * sizeof w, sizeof w);
        const uint64_t page = bytes(memmap::PageSize::k4K);
        if (w.bytes == 0 || w.bytes % page != 0 || w.gpa % page != 0 || w.rkey_bytes == 0 || w.rkey_bytes > kMaxRkeyBytes ||
            body.size() - keys_at < w.rkey_bytes) {
            *why = "region " + std::to_string(i) + " malformed";
            return nullptr;
        }
        if (__builtin_add_overflow(total, w.bytes, &total) || total > max_bytes) {
            *why = "guest RAM larger than this server takes (--max-guest-ram)";
            return nullptr;
        }
        const std::vector<uint8_t> packed(body.begin() + static_cast<long>(keys_at),
                                          body.begin() + static_cast<long>(keys_at + w.rkey_bytes));
        keys_at += w.rkey_bytes;
        auto key = link.unpack_rkey(packed, why);
        if (!key) return nullptr;
        try {
            copy->mem_.add_region(memmap::GuestPhysAddr{w.gpa}, memmap::Backing::create(memmap::PageSize::k4K, w.bytes));
        } catch (const std::exception& e) {
            *why = std::string("region ") + std::to_string(i) + ": " + e.what();
            return nullptr;
        }
        copy->remote_.push_back(Remote{w.gpa, w.bytes, w.address, std::move(key)});
    }
    if (keys_at != body.size()) {
        *why = "region table has trailing bytes";
        return nullptr;
    }
    return copy;
}

const GuestRamCopy::Remote* GuestRamCopy::find(uint64_t gpa, uint64_t bytes) const {
    for (const Remote& r : remote_)
        if (gpa >= r.gpa && bytes <= r.bytes && gpa - r.gpa <= r.bytes - bytes) return &r;
    return nullptr;
}

bool GuestRamCopy::fetch(uint64_t gpa, uint8_t* local, uint64_t bytes) {
    const Remote* r = find(gpa, bytes);
    return r && link_.get(local, bytes, r->address + (gpa - r->gpa), *r->key);
}

bool GuestRamCopy::publish(uint64_t gpa, const uint8_t* local, uint64_t bytes) {
    const Remote* r = find(gpa, bytes);
    return r && link_.put(local, bytes, r->address + (gpa - r->gpa), *r->key);
}

bool GuestRamCopy::flush() { return link_.flush(); }

} // namespace kvmgpu::remote
