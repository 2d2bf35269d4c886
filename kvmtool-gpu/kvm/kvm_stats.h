// KVM's binary statistics (KVM_GET_STATS_FD, Linux 5.14+) for one VM or
// one vCPU: the reader parses the file's header and descriptors once,
// snapshot() reads every value, diff() subtracts two snapshots.
//
// The file layout (Documentation/virt/kvm/api.rst, KVM_GET_STATS_FD):
//   header  struct kvm_stats_header at offset 0: flags, name_size,
//           num_desc, id_offset, desc_offset, data_offset (all u32)
//   id      name_size bytes at id_offset ("kvm-<pid>" or ".../vcpu-<n>")
//   descs   num_desc descriptors at desc_offset, each 16 bytes (flags u32,
//           exponent s16, size u16, offset u32, bucket_size u32) followed
//           by a NUL-terminated name of name_size bytes
//   data    at data_offset: each descriptor's `size` u64 values at
//           data_offset + desc.offset
// Everything is read with pread. Contents are checked, not trusted: sizes
// and counts above sane bounds, names without a NUL, ranges past the end
// of the file (a short read) make the reader unavailable with a reason.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/kvm/unique_fd.h"

namespace kvmgpu {

enum class KvmStatType : uint8_t { Cumulative, Instant, Peak, LinearHist, LogHist, Unknown };
enum class KvmStatUnit : uint8_t { None, Bytes, Seconds, Cycles, Boolean, Unknown };
std::string_view to_string(KvmStatType t); // "cumulative", "instant", "peak", "linear-hist", "log-hist"
std::string_view to_string(KvmStatUnit u); // "", "bytes", "seconds", "cycles", "boolean"

// One descriptor as the kernel published it.
struct KvmStatDesc {
    std::string name;
    KvmStatType type = KvmStatType::Unknown;
    KvmStatUnit unit = KvmStatUnit::None;
    bool base_pow2 = false;   // value * 2^exponent instead of 10^exponent
    int16_t exponent = 0;     // e.g. -9 with unit Seconds: nanoseconds
    uint32_t offset = 0;      // bytes into the data block
    uint16_t size = 0;        // number of u64 values (1, or histogram buckets)
    uint32_t bucket_size = 0; // linear histograms only
};

// One statistic's values at one moment.
struct KvmStat {
    KvmStatType type = KvmStatType::Unknown;
    KvmStatUnit unit = KvmStatUnit::None;
    int16_t exponent = 0;
    std::vector<uint64_t> values;
};
using KvmStatsSnapshot = std::map<std::string, KvmStat>;

// One statistic across two snapshots. delta is after - before per value
// (wrapping as signed); for Instant and Peak statistics the meaningful
// figure is `after`, and delta only says how it moved.
struct KvmStatChange {
    KvmStatType type = KvmStatType::Unknown;
    KvmStatUnit unit = KvmStatUnit::None;
    int16_t exponent = 0;
    std::vector<uint64_t> before, after;
    std::vector<int64_t> delta;
    bool is_counter() const { return type == KvmStatType::Cumulative; }
};
using KvmStatsDiff = std::map<std::string, KvmStatChange>;

// Bounds the reader enforces (a real kernel stays far below them).
struct KvmStatsLimits {
    uint32_t max_name_size = 4096;
    uint32_t max_descs = 16384;
    uint32_t max_values_per_stat = 65536;
    uint64_t max_data_bytes = 16ull << 20;
};

class KvmStatsReader {
public:
    // Unavailable, with `reason`.
    explicit KvmStatsReader(std::string reason = "no statistics fd");
    // Takes the fd (an invalid one is fine: "the kernel has no
    // KVM_GET_STATS_FD") and parses header, id and descriptors. Never
    // throws for anything in the file; see available() / error().
    KvmStatsReader(UniqueFd fd, std::string what, KvmStatsLimits limits = {});

    bool available() const { return ok_; }
    // Why the reader is unavailable, or why the last snapshot() failed.
    const std::string& error() const { return error_; }
    const std::string& id() const { return id_; }
    const std::vector<KvmStatDesc>& descriptors() const { return descs_; }

    // Reads every value; nullopt (and error() set) when unavailable or the
    // data block cannot be read in full.
    std::optional<KvmStatsSnapshot> snapshot();

private:
    bool fail(std::string why);
    bool parse();

    UniqueFd fd_;
    std::string what_;
    KvmStatsLimits limits_;
    bool parsed_ = false; // header, id and descriptors are valid
    bool ok_ = false;     // ... and the data block was readable
    std::string error_;
    std::string id_;
    uint64_t data_offset_ = 0;
    uint64_t data_bytes_ = 0; // extent of the data block the descriptors cover
    std::vector<KvmStatDesc> descs_;
};

// Statistics present in both snapshots with the same number of values.
KvmStatsDiff diff(const KvmStatsSnapshot& before, const KvmStatsSnapshot& after);

} // namespace kvmgpu
