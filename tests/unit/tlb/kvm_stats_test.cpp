// KvmStatsReader against synthetic KVM_GET_STATS_FD files in a memfd, laid
// out per Documentation/virt/kvm/api.rst (header, id, descriptors, data),
// well-formed and malformed; and against the real thing when /dev/kvm opens.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/kvm/kvm_stats.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/kvm/vm_fd.h"
#include "kvmtool-gpu/kvm/vcpu_fd.h"

using kvmgpu::KvmStatsReader;
using kvmgpu::KvmStatType;
using kvmgpu::KvmStatUnit;
using kvmgpu::UniqueFd;

namespace {

constexpr uint32_t kNameSize = 48; // KVM_STATS_NAME_SIZE

struct Stat {
    std::string name;
    uint32_t flags;
    std::vector<uint64_t> values;
    int16_t exponent = 0;
};

// A stats file image: header, id, descriptors, data, in that order (as the
// kernel lays them out), with knobs to break it.
struct StatsFile {
    std::string id = "kvm-1234";
    std::vector<Stat> stats;
    uint32_t name_size = kNameSize;
    // Overrides, applied after layout when set.
    std::optional<uint32_t> num_desc, desc_offset, data_offset, id_offset;
    std::optional<std::pair<size_t, uint32_t>> desc_data_offset; // (index, offset)
    std::optional<std::pair<size_t, uint16_t>> desc_size;        // (index, size)
    bool unterminated_name = false;
    size_t truncate_to = SIZE_MAX;

    std::vector<uint8_t> bytes() const {
        const uint32_t hdr = 24, id_off = hdr, desc_off = id_off + name_size;
        const uint32_t stride = 16 + name_size;
        const uint32_t data_off = desc_off + stride * uint32_t(stats.size());
        std::vector<uint8_t> out(data_off);
        auto put32 = [&](size_t at, uint32_t v) { std::memcpy(&out[at], &v, 4); };
        put32(0, 0);
        put32(4, name_size);
        put32(8, num_desc.value_or(uint32_t(stats.size())));
        put32(12, id_offset.value_or(id_off));
        put32(16, desc_offset.value_or(desc_off));
        put32(20, data_offset.value_or(data_off));
        std::memcpy(&out[id_off], id.data(), std::min<size_t>(id.size(), name_size - 1));
        uint32_t data_at = 0;
        std::vector<uint8_t> data;
        for (size_t i = 0; i < stats.size(); ++i) {
            const Stat& s = stats[i];
            const size_t d = desc_off + i * stride;
            put32(d, s.flags);
            std::memcpy(&out[d + 4], &s.exponent, 2);
            uint16_t size = uint16_t(s.values.size());
            if (desc_size && desc_size->first == i) size = desc_size->second;
            std::memcpy(&out[d + 6], &size, 2);
            uint32_t off = data_at;
            if (desc_data_offset && desc_data_offset->first == i) off = desc_data_offset->second;
            put32(d + 8, off);
            put32(d + 12, 0);
            std::memcpy(&out[d + 16], s.name.data(), std::min<size_t>(s.name.size(), name_size));
            if (unterminated_name && i == 0) std::memset(&out[d + 16], 'x', name_size);
            for (uint64_t v : s.values) {
                data.resize(data.size() + 8);
                std::memcpy(&data[data.size() - 8], &v, 8);
            }
            data_at += uint32_t(s.values.size() * 8);
        }
        out.insert(out.end(), data.begin(), data.end());
        if (truncate_to < out.size()) out.resize(truncate_to);
        return out;
    }
};

// The image in a memfd, as a stats fd would be read (pread at offsets).
UniqueFd memfd_of(const std::vector<uint8_t>& bytes) {
    const int fd = memfd_create("kvm-stats-test", MFD_CLOEXEC);
    if (fd < 0) return UniqueFd();
    if (!bytes.empty() && pwrite(fd, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) {
        close(fd);
        return UniqueFd();
    }
    return UniqueFd(fd);
}

StatsFile typical() {
    StatsFile f;
    f.stats = {
        {"exits", 0x00, {100}},                               // cumulative
        {"pages_2m", 0x01, {7}},                              // instant
        {"halt_poll_ns", 0x00 | 0x20, {5000}, -9},            // cumulative, seconds, 10^-9
        {"halt_wait_hist", 0x04 | 0x20, {1, 2, 3, 4}, -9},    // log histogram
        {"max_mmu_rmap_size", 0x02, {12}},                    // peak
    };
    return f;
}

KvmStatsReader reader_of(const StatsFile& f, kvmgpu::KvmStatsLimits limits = {}) {
    return KvmStatsReader(memfd_of(f.bytes()), "test stats", limits);
}

} // namespace

TEST(KvmStats, ParsesAWellFormedFile) {
    auto r = reader_of(typical());
    ASSERT_TRUE(r.available()) << r.error();
    EXPECT_EQ(r.id(), "kvm-1234");
    ASSERT_EQ(r.descriptors().size(), 5u);
    EXPECT_EQ(r.descriptors()[0].name, "exits");
    EXPECT_EQ(r.descriptors()[0].type, KvmStatType::Cumulative);
    EXPECT_EQ(r.descriptors()[1].type, KvmStatType::Instant);
    EXPECT_EQ(r.descriptors()[2].unit, KvmStatUnit::Seconds);
    EXPECT_EQ(r.descriptors()[2].exponent, -9);
    EXPECT_EQ(r.descriptors()[3].type, KvmStatType::LogHist);
    EXPECT_EQ(r.descriptors()[3].size, 4);
    EXPECT_EQ(r.descriptors()[4].type, KvmStatType::Peak);

    auto s = r.snapshot();
    ASSERT_TRUE(s.has_value()) << r.error();
    EXPECT_EQ(s->at("exits").values, std::vector<uint64_t>{100});
    EXPECT_EQ(s->at("pages_2m").values, std::vector<uint64_t>{7});
    EXPECT_EQ(s->at("halt_wait_hist").values, (std::vector<uint64_t>{1, 2, 3, 4}));
}

TEST(KvmStats, SnapshotsSeeNewValuesAndDiffSubtracts) {
    StatsFile f = typical();
    auto bytes = f.bytes();
    UniqueFd fd = memfd_of(bytes);
    const int raw = fd.get();
    KvmStatsReader r(std::move(fd), "test stats");
    ASSERT_TRUE(r.available()) << r.error();
    const auto before = r.snapshot();
    ASSERT_TRUE(before);

    // Rewrite the data block as the kernel would update it.
    f.stats[0].values = {142};
    f.stats[1].values = {9};
    f.stats[3].values = {1, 5, 3, 10};
    bytes = f.bytes();
    ASSERT_EQ(pwrite(raw, bytes.data(), bytes.size(), 0), ssize_t(bytes.size()));
    const auto after = r.snapshot();
    ASSERT_TRUE(after);

    const auto d = kvmgpu::diff(*before, *after);
    EXPECT_EQ(d.at("exits").delta, std::vector<int64_t>{42});
    EXPECT_TRUE(d.at("exits").is_counter());
    EXPECT_EQ(d.at("pages_2m").after, std::vector<uint64_t>{9});
    EXPECT_FALSE(d.at("pages_2m").is_counter());
    EXPECT_EQ(d.at("halt_wait_hist").delta, (std::vector<int64_t>{0, 3, 0, 6}));
    EXPECT_EQ(d.at("halt_poll_ns").delta, std::vector<int64_t>{0});
}

TEST(KvmStats, DiffSkipsStatsMissingOnOneSide) {
    kvmgpu::KvmStatsSnapshot a, b;
    a["only_before"] = {KvmStatType::Cumulative, KvmStatUnit::None, 0, {1}};
    b["only_after"] = {KvmStatType::Cumulative, KvmStatUnit::None, 0, {1}};
    a["both"] = {KvmStatType::Cumulative, KvmStatUnit::None, 0, {5}};
    b["both"] = {KvmStatType::Cumulative, KvmStatUnit::None, 0, {3}};
    a["resized"] = {KvmStatType::LinearHist, KvmStatUnit::None, 0, {1, 2}};
    b["resized"] = {KvmStatType::LinearHist, KvmStatUnit::None, 0, {1, 2, 3}};
    const auto d = kvmgpu::diff(a, b);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d.at("both").delta, std::vector<int64_t>{-2}); // a counter reset shows as negative
}

TEST(KvmStats, InvalidFdIsUnavailableWithAReason) {
    KvmStatsReader r(UniqueFd(), "VM stats");
    EXPECT_FALSE(r.available());
    EXPECT_NE(r.error().find("KVM_GET_STATS_FD not available"), std::string::npos) << r.error();
    EXPECT_FALSE(r.snapshot().has_value());
    KvmStatsReader d;
    EXPECT_FALSE(d.available());
    EXPECT_FALSE(d.snapshot().has_value());
}

// Every malformed layout is refused with a reason, never a crash or a
// giant allocation.
struct Malformed {
    const char* what;
    void (*breakit)(StatsFile&);
    const char* expect; // substring of the error
};

class KvmStatsMalformed : public testing::TestWithParam<Malformed> {};

TEST_P(KvmStatsMalformed, IsRefused) {
    StatsFile f = typical();
    GetParam().breakit(f);
    auto r = reader_of(f);
    EXPECT_FALSE(r.available()) << GetParam().what;
    EXPECT_NE(r.error().find(GetParam().expect), std::string::npos) << GetParam().what << ": " << r.error();
    EXPECT_FALSE(r.snapshot().has_value());
    EXPECT_TRUE(r.descriptors().empty());
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, KvmStatsMalformed,
    testing::Values(
        Malformed{"empty file", [](StatsFile& f) { f.truncate_to = 0; }, "header truncated"},
        Malformed{"short header", [](StatsFile& f) { f.truncate_to = 10; }, "header truncated"},
        Malformed{"name_size 0", [](StatsFile& f) { f.name_size = 0; }, "name_size 0"},
        Malformed{"huge name_size", [](StatsFile& f) { f.name_size = 1u << 20; }, "name_size"},
        Malformed{"huge num_desc", [](StatsFile& f) { f.num_desc = 0x40000000; }, "num_desc"},
        Malformed{"num_desc past the end", [](StatsFile& f) { f.num_desc = 5000; }, "run past the end"},
        Malformed{"desc_offset past the end", [](StatsFile& f) { f.desc_offset = 0x7FFFFFF0; }, "run past the end"},
        Malformed{"id_offset past the end", [](StatsFile& f) { f.id_offset = 0xFFFFFF00; }, "id at offset"},
        Malformed{"data_offset past the end", [](StatsFile& f) { f.data_offset = 0x10000000; }, "data block"},
        Malformed{"data truncated", [](StatsFile& f) { f.truncate_to = 24 + 48 + 5 * 64 + 16; }, "data block"},
        Malformed{"value offset beyond limit", [](StatsFile& f) { f.desc_data_offset = {{1, 0xFFFFFFF0u}}; },
                  "beyond"},
        Malformed{"value offset past the end", [](StatsFile& f) { f.desc_data_offset = {{1, 4096}}; }, "data block"},
        Malformed{"size 0", [](StatsFile& f) { f.desc_size = {{0, 0}}; }, "size 0"},
        Malformed{"unterminated name", [](StatsFile& f) { f.unterminated_name = true; }, "not NUL-terminated"},
        Malformed{"empty name", [](StatsFile& f) { f.stats[2].name = ""; }, "empty name"},
        Malformed{"duplicate name", [](StatsFile& f) { f.stats[4].name = "exits"; }, "duplicate name"}),
    [](const testing::TestParamInfo<Malformed>& i) {
        std::string n = i.param.what;
        for (char& c : n)
            if (!isalnum(static_cast<unsigned char>(c))) c = '_';
        return n;
    });

TEST(KvmStats, TooManyValuesForTheLimitsIsRefused) {
    StatsFile f = typical();
    f.desc_size = {{3, 60000}}; // a 60000-bucket histogram, above a limit of 1024
    kvmgpu::KvmStatsLimits lim;
    lim.max_values_per_stat = 1024;
    auto r = reader_of(f, lim);
    EXPECT_FALSE(r.available());
    EXPECT_NE(r.error().find("above the limit"), std::string::npos) << r.error();
}

TEST(KvmStats, FileShrinkingAfterParseFailsTheSnapshotNotTheProcess) {
    StatsFile f = typical();
    UniqueFd fd = memfd_of(f.bytes());
    const int raw = fd.get();
    KvmStatsReader r(std::move(fd), "test stats");
    ASSERT_TRUE(r.available()) << r.error();
    ASSERT_EQ(ftruncate(raw, 100), 0);
    EXPECT_FALSE(r.snapshot().has_value());
    EXPECT_NE(r.error().find("data block"), std::string::npos) << r.error();
}

// The real kernel's files, where this host has KVM (the nested machine,
// the GPU machine); skipped elsewhere.
TEST(KvmStats, RealVmAndVcpuStatsParse) {
    std::string why;
    if (!kvmgpu::KvmSystem::available(&why)) GTEST_SKIP() << "no /dev/kvm: " << why;
    kvmgpu::KvmSystem kvm;
    auto vm = kvm.create_vm();
    KvmStatsReader vr(vm->stats_fd(), "VM stats");
    if (!vr.available() && vr.error().find("not available") != std::string::npos)
        GTEST_SKIP() << vr.error();
    ASSERT_TRUE(vr.available()) << vr.error();
    EXPECT_EQ(vr.id().rfind("kvm-", 0), 0u) << vr.id();
    EXPECT_GT(vr.descriptors().size(), 3u);
    auto vcpu = vm->create_vcpu(0);
    KvmStatsReader cr(vcpu->stats_fd(), "vCPU stats");
    ASSERT_TRUE(cr.available()) << cr.error();
    const auto s = cr.snapshot();
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->count("exits") || s->count("halt_exits")) << "no exits counter among " << s->size();
}
