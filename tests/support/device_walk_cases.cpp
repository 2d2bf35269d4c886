// See device_walk_cases.h.
#include "tests/support/device_walk_cases.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "kvmtool-gpu/abi/platform_abi.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint64_t kListGpa = kDataGpa;                // the list (up to 64 KiB)
constexpr uint64_t kSrcGpa = kDataGpa + (64 << 10);    // scattered guest buffer
constexpr uint64_t kSrcBytes = 3ull << 20;
constexpr uint64_t kFlatGpa = kSrcGpa + kSrcBytes;     // contiguous staging for checks

std::vector<uint8_t> pattern(uint64_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13 + (i >> 9));
    return v;
}

// `n` entries in shuffled 1 KiB slots of the source area, each at an odd
// offset in its slot with an odd length; a few runs that continue the
// previous entry exactly (which a walk must not mind).
std::vector<vgpu_sg_entry> scattered_list(uint64_t n, uint32_t seed) {
    std::vector<uint64_t> slot(kSrcBytes / 1024);
    std::iota(slot.begin(), slot.end(), 0);
    std::shuffle(slot.begin(), slot.end(), std::mt19937(seed));
    std::vector<vgpu_sg_entry> l;
    for (uint64_t i = 0; i < n; ++i) {
        if (i % 97 == 5) { // adjacent to the last one
            const auto& p = l.back();
            if (p.gpa + p.len + 64 <= kSrcGpa + (slot[i - 1] + 1) * 1024) {
                l.push_back({p.gpa + p.len, 64});
                continue;
            }
        }
        const uint64_t off = (i * 7) % 40, len = 1024 - 40 - (i % 31);
        l.push_back({kSrcGpa + slot[i] * 1024 + off, len});
    }
    return l;
}

uint64_t sum(const std::vector<vgpu_sg_entry>& l) {
    uint64_t t = 0;
    for (const auto& e : l) t += e.len;
    return t;
}

Done walk(VgpuRig& rig, uint16_t op, uint64_t dptr, uint64_t list_gpa, uint64_t count, uint64_t total,
          uint64_t how = VGPU_SG_DEVICE_WALK, uint16_t flags = 0, uint64_t stream = 0) {
    return rig.call({.opcode = op, .args = {dptr, list_gpa, count, stream, how, total}, .flags = flags});
}

std::vector<uint8_t> device_bytes(VgpuRig& rig, uint64_t dptr, uint64_t n) {
    std::vector<uint8_t> out(n);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kFlatGpa, dptr, n, 0}}).status, VGPU_SUCCESS);
    rig.get(kFlatGpa, out.data(), n);
    return out;
}

} // namespace

void walk_moves_the_right_bytes(VgpuRig& rig) {
    for (uint64_t how : {uint64_t{VGPU_SG_DEVICE_WALK}, uint64_t{VGPU_SG_AUTO}}) {
        SCOPED_TRACE(how);
        const auto list = scattered_list(2500, static_cast<uint32_t>(how) + 1); // three scan blocks
        const uint64_t n = sum(list);
        const auto data = pattern(n, static_cast<uint8_t>(how));
        uint64_t off = 0;
        for (const auto& e : list) rig.put(e.gpa, data.data() + off, e.len), off += e.len;
        rig.put(kListGpa, list.data(), list.size() * sizeof(vgpu_sg_entry));
        const uint64_t d = rig.alloc(n + 32);

        ASSERT_EQ(walk(rig, VGPU_OP_MEMCPY_HTOD_SG, d + 16, kListGpa, list.size(), n, how).status, VGPU_SUCCESS);
        EXPECT_EQ(device_bytes(rig, d + 16, n), data);

        // Back out through another list over the same slots, in another order.
        const auto back = scattered_list(2500, 99);
        std::vector<uint8_t> zero(kSrcBytes, 0);
        rig.put(kSrcGpa, zero.data(), zero.size());
        rig.put(kListGpa, back.data(), back.size() * sizeof(vgpu_sg_entry));
        const uint64_t m = std::min(n, sum(back));
        std::vector<vgpu_sg_entry> cut;
        for (uint64_t left = m; left > 0;) { // the prefix of `back` covering m bytes
            vgpu_sg_entry e = back[cut.size()];
            e.len = std::min(e.len, left);
            cut.push_back(e);
            left -= e.len;
        }
        rig.put(kListGpa, cut.data(), cut.size() * sizeof(vgpu_sg_entry));
        ASSERT_EQ(walk(rig, VGPU_OP_MEMCPY_DTOH_SG, d + 16, kListGpa, cut.size(), m, how).status, VGPU_SUCCESS);
        off = 0;
        for (const auto& e : cut) {
            std::vector<uint8_t> got(e.len);
            rig.get(e.gpa, got.data(), e.len);
            ASSERT_TRUE(std::equal(got.begin(), got.end(), data.begin() + off)) << "entry at gpa " << e.gpa;
            off += e.len;
        }
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_SUCCESS);
    }
    // AUTO without a total still works (the host reads the list), and one
    // entry of exactly one byte is a transfer like any other.
    const vgpu_sg_entry one{kSrcGpa + 3, 1};
    rig.put(kListGpa, &one, sizeof one);
    const uint64_t d = rig.alloc(4096);
    EXPECT_EQ(walk(rig, VGPU_OP_MEMCPY_HTOD_SG, d, kListGpa, 1, 0, VGPU_SG_AUTO).status, VGPU_SUCCESS);
    EXPECT_EQ(walk(rig, VGPU_OP_MEMCPY_HTOD_SG, d, kListGpa, 1, 1).status, VGPU_SUCCESS);
}

void walk_many_in_flight(VgpuRig& rig) {
    constexpr int kWalks = 6;
    constexpr uint64_t kEntries = 300, kListBytes = kEntries * sizeof(vgpu_sg_entry);
    const Done st = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ASSERT_EQ(st.status, VGPU_SUCCESS);
    std::vector<std::vector<vgpu_sg_entry>> lists;
    std::vector<uint64_t> dev;
    const auto data = pattern(kSrcBytes, 5);
    rig.put(kSrcGpa, data.data(), data.size());
    for (int i = 0; i < kWalks; ++i) {
        lists.push_back(scattered_list(kEntries, 100 + i));
        rig.put(kListGpa + i * kListBytes, lists[i].data(), kListBytes);
        dev.push_back(rig.alloc(sum(lists[i])));
    }
    for (int i = 0; i < kWalks; ++i)
        ASSERT_EQ(walk(rig, VGPU_OP_MEMCPY_HTOD_SG, dev[i], kListGpa + i * kListBytes, kEntries, sum(lists[i]),
                       VGPU_SG_DEVICE_WALK, VGPU_CMD_FLAG_ASYNC, i % 2 ? st.r0 : 0)
                      .status,
                  VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
    for (int i = 0; i < kWalks; ++i) {
        std::vector<uint8_t> want;
        for (const auto& e : lists[i]) {
            const auto from = data.begin() + static_cast<std::ptrdiff_t>(e.gpa - kSrcGpa);
            want.insert(want.end(), from, from + static_cast<std::ptrdiff_t>(e.len));
        }
        EXPECT_EQ(device_bytes(rig, dev[i], want.size()), want) << "walk " << i;
    }
}

void walk_refuses_bad_lists(VgpuRig& rig) {
    constexpr uint64_t kBytes = 64 << 10;
    const uint64_t d = rig.alloc(kBytes);
    const auto before = pattern(kBytes, 42);
    rig.put(kFlatGpa, before.data(), kBytes);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kFlatGpa, kBytes, 0}}).status, VGPU_SUCCESS);

    const vgpu_sg_entry ok{kSrcGpa, 4096};
    struct Case {
        const char* what;
        std::vector<vgpu_sg_entry> list;
        uint64_t total;
        uint64_t list_gpa = kListGpa;
        uint64_t count = 0; // 0: list.size()
    };
    const std::vector<Case> cases = {
        {"entry past the end of RAM", {ok, {kRamBytes - 100, 200}}, 4296},
        {"entry wholly outside RAM", {{kRamBytes + 4096, 16}, ok}, 4112},
        {"entry in the vGPU's MMIO window", {{KVMGPU_VGPU_GPA, 16}}, 16},
        {"entry that wraps", {ok, {~0ull - 10, 100}}, 4196},
        {"empty entry", {ok, {kSrcGpa, 0}, ok}, 8192},
        {"entries sum to less than total", {ok, ok}, 8193},
        {"entries sum to more than total", {ok, ok}, 8191},
        {"one entry longer than total", {{kSrcGpa, 8192}}, 4096},
        {"huge lengths that would wrap the sum", {{kSrcGpa, 1ull << 63}, {kSrcGpa, 1ull << 63}}, 4096},
        {"total 0", {ok}, 0},
        {"total beyond the allocation", {{kSrcGpa, kBytes + 16}}, kBytes + 16},
        {"list not 16-byte aligned", {ok}, 4096, kListGpa + 8},
        {"list past the end of RAM", {ok}, 4096, kRamBytes - 8},
        {"more entries than VGPU_MAX_SG_ENTRIES", {ok}, 4096, kListGpa, VGPU_MAX_SG_ENTRIES + 1},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        for (uint16_t op : {uint16_t{VGPU_OP_MEMCPY_HTOD_SG}, uint16_t{VGPU_OP_MEMCPY_DTOH_SG}}) {
            for (uint16_t flags : {uint16_t{0}, uint16_t{VGPU_CMD_FLAG_ASYNC}}) {
                std::vector<uint8_t> src_before(8192);
                rig.get(kSrcGpa, src_before.data(), src_before.size());
                if (c.list_gpa + c.list.size() * sizeof(vgpu_sg_entry) <= kRamBytes)
                    rig.put(c.list_gpa, c.list.data(), c.list.size() * sizeof(vgpu_sg_entry));
                const uint64_t count = c.count ? c.count : c.list.size();
                const uint32_t at_command = walk(rig, op, d, c.list_gpa, count, c.total, VGPU_SG_DEVICE_WALK, flags).status;
                const uint32_t at_sync = rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status;
                // Refused exactly once: by the command or by the synchronize after it.
                EXPECT_TRUE((at_command == VGPU_ERROR_INVALID_VALUE) != (at_sync == VGPU_ERROR_INVALID_VALUE))
                    << "op " << op << " flags " << flags << ": command " << at_command << ", sync " << at_sync;
                if (flags == 0) {
                    EXPECT_EQ(at_command, VGPU_ERROR_INVALID_VALUE) << "op " << op;
                }
                EXPECT_EQ(rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS) << "reported twice";
                EXPECT_EQ(device_bytes(rig, d, kBytes), before) << "op " << op << " flags " << flags;
                std::vector<uint8_t> src_after(8192);
                rig.get(kSrcGpa, src_after.data(), src_after.size());
                EXPECT_EQ(src_after, src_before) << "guest RAM written by a refused walk";
            }
        }
    }
    // And the device still works.
    rig.put(kListGpa, &ok, sizeof ok);
    EXPECT_EQ(walk(rig, VGPU_OP_MEMCPY_HTOD_SG, d, kListGpa, 1, 4096).status, VGPU_SUCCESS);
}

uint32_t post_refused_async_walk(VgpuRig& rig, uint64_t dptr) {
    const std::vector<vgpu_sg_entry> list{{kSrcGpa, 4096}, {kSrcGpa, 0}, {kSrcGpa + 4096, 4096}};
    rig.put(kListGpa, list.data(), list.size() * sizeof(vgpu_sg_entry));
    return walk(rig, VGPU_OP_MEMCPY_HTOD_SG, dptr, kListGpa, list.size(), 8192, VGPU_SG_DEVICE_WALK,
                VGPU_CMD_FLAG_ASYNC)
        .status;
}

} // namespace kvmgpu::vgpu::test
