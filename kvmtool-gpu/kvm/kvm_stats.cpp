#include "kvmtool-gpu/kvm/kvm_stats.h"

#include <linux/kvm.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cerrno>
#include <cstring>
#include <set>

namespace kvmgpu {

namespace {

// The ABI's two records, spelled out so the reader builds against headers
// older than 5.14 too; checked against <linux/kvm.h> where it has them.
struct RawHeader {
    uint32_t flags, name_size, num_desc, id_offset, desc_offset, data_offset;
};
struct RawDesc {
    uint32_t flags;
    int16_t exponent;
    uint16_t size;
    uint32_t offset;
    uint32_t bucket_size;
};
static_assert(sizeof(RawHeader) == 24 && sizeof(RawDesc) == 16);
// Only the header is checked against <linux/kvm.h>: its kvm_stats_desc ends in
// __DECLARE_FLEX_ARRAY, which in C++ adds an empty struct and moves `name`
// (the same trap as kvm_cpuid2, see cpuid_ioctls.h), so RawDesc is the ABI.
#ifdef KVM_GET_STATS_FD
static_assert(sizeof(kvm_stats_header) == sizeof(RawHeader));
static_assert(offsetof(kvm_stats_header, data_offset) == offsetof(RawHeader, data_offset));
static_assert(offsetof(kvm_stats_desc, bucket_size) == offsetof(RawDesc, bucket_size));
#endif

// Cap on the descriptor table read in one piece.
constexpr uint64_t kMaxDescTableBytes = 8ull << 20;

// Reads exactly len bytes at off. Returns bytes read (< len at end of
// file), or -1 with errno.
int64_t pread_full(int fd, void* buf, uint64_t len, uint64_t off) {
    uint64_t got = 0;
    while (got < len) {
        const ssize_t n = ::pread(fd, static_cast<char*>(buf) + got, len - got, static_cast<off_t>(off + got));
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) break;
        got += static_cast<uint64_t>(n);
    }
    return static_cast<int64_t>(got);
}

KvmStatType type_of(uint32_t flags) {
    switch (flags & 0xFu) {
    case 0: return KvmStatType::Cumulative;
    case 1: return KvmStatType::Instant;
    case 2: return KvmStatType::Peak;
    case 3: return KvmStatType::LinearHist;
    case 4: return KvmStatType::LogHist;
    }
    return KvmStatType::Unknown;
}

KvmStatUnit unit_of(uint32_t flags) {
    switch ((flags >> 4) & 0xFu) {
    case 0: return KvmStatUnit::None;
    case 1: return KvmStatUnit::Bytes;
    case 2: return KvmStatUnit::Seconds;
    case 3: return KvmStatUnit::Cycles;
    case 4: return KvmStatUnit::Boolean;
    }
    return KvmStatUnit::Unknown;
}

std::string errno_text(int err) { return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")"; }

} // namespace

std::string_view to_string(KvmStatType t) {
    switch (t) {
    case KvmStatType::Cumulative: return "cumulative";
    case KvmStatType::Instant: return "instant";
    case KvmStatType::Peak: return "peak";
    case KvmStatType::LinearHist: return "linear-hist";
    case KvmStatType::LogHist: return "log-hist";
    case KvmStatType::Unknown: break;
    }
    return "unknown";
}

std::string_view to_string(KvmStatUnit u) {
    switch (u) {
    case KvmStatUnit::None: return "";
    case KvmStatUnit::Bytes: return "bytes";
    case KvmStatUnit::Seconds: return "seconds";
    case KvmStatUnit::Cycles: return "cycles";
    case KvmStatUnit::Boolean: return "boolean";
    case KvmStatUnit::Unknown: break;
    }
    return "unknown";
}

KvmStatsReader::KvmStatsReader(std::string reason) : error_(std::move(reason)) {}

KvmStatsReader::KvmStatsReader(UniqueFd fd, std::string what, KvmStatsLimits limits)
    : fd_(std::move(fd)), what_(std::move(what)), limits_(limits) {
    if (!fd_) {
        error_ = what_ + ": KVM_GET_STATS_FD not available (kernel older than 5.14, or the ioctl failed)";
        return;
    }
    parsed_ = parse();
    ok_ = parsed_ && snapshot().has_value(); // the data block must be readable too
}

bool KvmStatsReader::fail(std::string why) {
    error_ = what_ + ": " + why;
    descs_.clear();
    parsed_ = ok_ = false;
    return false;
}

bool KvmStatsReader::parse() {
    RawHeader h{};
    const int64_t n = pread_full(fd_.get(), &h, sizeof h, 0);
    if (n < 0) return fail("reading the header: " + errno_text(errno));
    if (n != sizeof h) return fail("header truncated (" + std::to_string(n) + " of 24 bytes)");
    if (h.name_size == 0 || h.name_size > limits_.max_name_size)
        return fail("name_size " + std::to_string(h.name_size) + " outside [1, " +
                    std::to_string(limits_.max_name_size) + "]");
    if (h.num_desc > limits_.max_descs)
        return fail("num_desc " + std::to_string(h.num_desc) + " above the limit " + std::to_string(limits_.max_descs));

    // The id string: name_size bytes, NUL-terminated.
    std::vector<char> id(h.name_size);
    const int64_t idn = pread_full(fd_.get(), id.data(), id.size(), h.id_offset);
    if (idn < 0) return fail("reading the id: " + errno_text(errno));
    if (static_cast<uint64_t>(idn) != id.size())
        return fail("id at offset " + std::to_string(h.id_offset) + " runs past the end of the file");
    const auto id_end = std::find(id.begin(), id.end(), '\0');
    if (id_end == id.end()) return fail("id is not NUL-terminated within name_size");
    id_.assign(id.begin(), id_end);

    const uint64_t stride = sizeof(RawDesc) + uint64_t{h.name_size};
    const uint64_t table = stride * h.num_desc; // both factors bounded above: no overflow
    if (table > kMaxDescTableBytes)
        return fail("descriptor table of " + std::to_string(table) + " bytes is implausibly large");
    std::vector<unsigned char> buf(table);
    const int64_t dn = pread_full(fd_.get(), buf.data(), table, h.desc_offset);
    if (dn < 0) return fail("reading the descriptors: " + errno_text(errno));
    if (static_cast<uint64_t>(dn) != table)
        return fail("descriptors at offset " + std::to_string(h.desc_offset) + " (" + std::to_string(h.num_desc) +
                    " x " + std::to_string(stride) + " bytes) run past the end of the file");

    std::set<std::string> seen;
    uint64_t extent = 0;
    descs_.reserve(h.num_desc);
    for (uint32_t i = 0; i < h.num_desc; ++i) {
        const unsigned char* p = buf.data() + i * stride;
        RawDesc r;
        std::memcpy(&r, p, sizeof r);
        const char* name = reinterpret_cast<const char*>(p + sizeof r);
        const size_t len = strnlen(name, h.name_size);
        const std::string where = "descriptor " + std::to_string(i);
        if (len == h.name_size) return fail(where + ": name is not NUL-terminated within name_size");
        if (len == 0) return fail(where + ": empty name");
        KvmStatDesc d;
        d.name.assign(name, len);
        if (r.size == 0) return fail(where + " (" + d.name + "): size 0");
        if (r.size > limits_.max_values_per_stat)
            return fail(where + " (" + d.name + "): " + std::to_string(r.size) + " values, above the limit");
        const uint64_t end = uint64_t{r.offset} + uint64_t{r.size} * 8;
        if (end > limits_.max_data_bytes)
            return fail(where + " (" + d.name + "): data at offset " + std::to_string(r.offset) +
                        " lies beyond the " + std::to_string(limits_.max_data_bytes) + "-byte limit");
        if (!seen.insert(d.name).second) return fail(where + ": duplicate name " + d.name);
        d.type = type_of(r.flags);
        d.unit = unit_of(r.flags);
        d.base_pow2 = ((r.flags >> 8) & 0xFu) == 1;
        d.exponent = r.exponent;
        d.offset = r.offset;
        d.size = r.size;
        d.bucket_size = r.bucket_size;
        extent = std::max(extent, end);
        descs_.push_back(std::move(d));
    }
    data_offset_ = h.data_offset;
    data_bytes_ = extent;
    return true;
}

std::optional<KvmStatsSnapshot> KvmStatsReader::snapshot() {
    if (!parsed_) return std::nullopt; // error_ says why
    std::vector<unsigned char> data(data_bytes_);
    const int64_t n = pread_full(fd_.get(), data.data(), data.size(), data_offset_);
    if (n < 0) {
        error_ = what_ + ": reading the data block: " + errno_text(errno);
        return std::nullopt;
    }
    if (static_cast<uint64_t>(n) != data.size()) {
        fail("data block at offset " + std::to_string(data_offset_) + " (" + std::to_string(data_bytes_) +
             " bytes) runs past the end of the file");
        return std::nullopt;
    }
    KvmStatsSnapshot s;
    for (const auto& d : descs_) {
        KvmStat st;
        st.type = d.type;
        st.unit = d.unit;
        st.exponent = d.exponent;
        st.values.resize(d.size);
        std::memcpy(st.values.data(), data.data() + d.offset, uint64_t{d.size} * 8);
        s.emplace(d.name, std::move(st));
    }
    return s;
}

KvmStatsDiff diff(const KvmStatsSnapshot& before, const KvmStatsSnapshot& after) {
    KvmStatsDiff out;
    for (const auto& [name, a] : after) {
        const auto it = before.find(name);
        if (it == before.end() || it->second.values.size() != a.values.size()) continue;
        KvmStatChange c;
        c.type = a.type;
        c.unit = a.unit;
        c.exponent = a.exponent;
        c.before = it->second.values;
        c.after = a.values;
        c.delta.resize(a.values.size());
        for (size_t i = 0; i < a.values.size(); ++i)
            c.delta[i] = static_cast<int64_t>(a.values[i] - it->second.values[i]);
        out.emplace(name, std::move(c));
    }
    return out;
}

} // namespace kvmgpu
