// The file window's bookkeeping (window_pieces.h) against a page-by-page
// model under random operations with hostile values, and the window itself
// (file_window.h) over real host mappings of a file with a fake slot setter
// standing in for KVM: slots match the runs of pieces, never overlap, never
// exceed the cap, and what the guest would see through them is the file's.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kvmtool-gpu/vmm/linux/file_window.h"
#include "kvmtool-gpu/vmm/linux/window_pieces.h"

namespace kvmgpu::linux_abi {
namespace {

constexpr uint64_t kPg = 4096, k2M = 2ull << 20;

// One page of the model: unmapped (prot -1), or its protection and what it holds.
struct ModelPage {
    int prot = -1;
    bool anonymous = false;
    uint64_t file_page = 0; // file pieces: the file offset of this page
    std::string name;
};

struct Model {
    uint64_t lo, pages;
    std::vector<ModelPage> p;
    Model(uint64_t lo_, uint64_t n) : lo(lo_), pages(n), p(n) {}
    bool in(uint64_t a, uint64_t e) const { return a >= lo && e <= lo + pages * kPg && a < e; }
};

// Checks the pieces describe the model exactly, page by page, and that the
// runs are the maximal touching same-class stretches.
void expect_same(const WindowPieces& w, const Model& m) {
    uint64_t mapped = 0;
    for (uint64_t i = 0; i < m.pages; ++i) {
        const uint64_t a = m.lo + i * kPg;
        const auto got = w.at(a);
        const ModelPage& want = m.p[i];
        ASSERT_EQ(got.has_value(), want.prot >= 0) << std::hex << a;
        if (!got) continue;
        ++mapped;
        const auto& [s, piece] = *got;
        ASSERT_LE(s, a);
        ASSERT_GT(piece.end, a);
        ASSERT_EQ(piece.prot, want.prot) << std::hex << a;
        ASSERT_EQ(piece.anonymous, want.anonymous) << std::hex << a;
        if (!want.anonymous) {
            ASSERT_EQ(piece.offset + (a - s), want.file_page) << std::hex << a;
            ASSERT_EQ(piece.name, want.name);
        }
    }
    // Pieces never overlap and lie in the window.
    uint64_t cursor = 0, covered = 0;
    for (const auto& [s, piece] : w.overlapping(w.lo(), w.hi())) {
        ASSERT_GE(s, cursor);
        ASSERT_LT(s, piece.end);
        cursor = piece.end;
        covered += piece.end - s;
    }
    ASSERT_EQ(covered, mapped * kPg);
    // Runs: each page of a readable or writable piece in exactly one run of its class; neighbours differ.
    const auto runs = w.runs(w.lo(), w.hi());
    for (size_t i = 0; i < runs.size(); ++i) {
        ASSERT_LT(runs[i].start, runs[i].end);
        if (i) ASSERT_FALSE(runs[i - 1].end == runs[i].start && runs[i - 1].cls == runs[i].cls) << "not maximal";
        if (i) ASSERT_LE(runs[i - 1].end, runs[i].start);
        for (uint64_t a = runs[i].start; a < runs[i].end; a += kPg) {
            const ModelPage& mp = m.p[(a - m.lo) / kPg];
            ASSERT_GE(mp.prot, 0);
            ASSERT_EQ(slot_class(mp.prot), runs[i].cls);
        }
    }
}

TEST(WindowPieces, RandomOperationsMatchAPageModel) {
    constexpr uint64_t kLo = 0x3800000000ull, kPages = 96;
    std::mt19937_64 rng(41);
    for (int round = 0; round < 40; ++round) {
        WindowPieces w(kLo, kLo + kPages * kPg);
        Model m(kLo, kPages);
        const std::string names[] = {"/lib/a.so", "/lib/b.so"};
        for (int step = 0; step < 300; ++step) {
            // Mostly in the window, sometimes across its edges, wrapping or empty.
            uint64_t a = kLo + (rng() % (kPages + 8)) * kPg - 4 * kPg;
            uint64_t len = (rng() % 24) * kPg;
            if (rng() % 20 == 0) a = UINT64_MAX - kPg * (rng() % 3);
            if (rng() % 30 == 0) len = UINT64_MAX - (rng() % 2) * kPg;
            const bool inside = w.inside(a, len);
            uint64_t e = 0;
            const bool wraps = __builtin_add_overflow(a, len, &e);
            ASSERT_EQ(inside, !wraps && m.in(a, e)) << std::hex << a << " " << len;
            if (!inside) continue; // the window's callers never pass such a range on
            const int prot = static_cast<int>(rng() % 8);
            switch (rng() % 4) {
            case 0: {
                const bool anon = rng() % 3 == 0;
                const uint64_t off = (rng() % 16) * kPg;
                const std::string& name = names[rng() % 2];
                w.insert(a, e, WindowPiece{e, prot, anon, off, anon ? "" : name});
                for (uint64_t x = a; x < e; x += kPg)
                    m.p[(x - kLo) / kPg] = ModelPage{prot, anon, off + (x - a), anon ? "" : name};
                break;
            }
            case 1:
                w.erase(a, e);
                for (uint64_t x = a; x < e; x += kPg) m.p[(x - kLo) / kPg] = ModelPage{};
                break;
            case 2: {
                bool all = true;
                for (uint64_t x = a; x < e; x += kPg) all = all && m.p[(x - kLo) / kPg].prot >= 0;
                ASSERT_EQ(w.fully_mapped(a, e), all);
                if (!all) break;
                w.protect(a, e, prot);
                for (uint64_t x = a; x < e; x += kPg) m.p[(x - kLo) / kPg].prot = prot;
                break;
            }
            case 3: {
                // A change undone: restore() brings back exactly what was there.
                const Model saved = m;
                const auto snap = w.snapshot(a, e);
                w.insert(a, e, WindowPiece{e, prot, true, 0, {}});
                w.restore(snap);
                m = saved;
                break;
            }
            }
            expect_same(w, m);
            if (HasFatalFailure()) return;
        }
    }
}

TEST(WindowPieces, SplitsAndMergesBackWhatOneMappingMade) {
    WindowPieces w(0x100000, 0x200000);
    w.insert(0x100000, 0x110000, WindowPiece{0, PROT_READ, false, 0x3000, "/lib/x.so"});
    w.protect(0x104000, 0x106000, PROT_READ | PROT_WRITE);
    EXPECT_EQ(w.count(), 3u);
    EXPECT_EQ(w.at(0x106000)->second.offset, 0x3000u + 0x6000);
    w.protect(0x104000, 0x106000, PROT_READ);
    EXPECT_EQ(w.count(), 1u) << "the split is joined again";
    // Touching but of another file offset: stays two.
    w.insert(0x110000, 0x111000, WindowPiece{0, PROT_READ, false, 0, "/lib/x.so"});
    EXPECT_EQ(w.count(), 2u);
    EXPECT_EQ(w.runs(w.lo(), w.hi()).size(), 1u) << "one read-only run: one slot";
    EXPECT_EQ(w.find_free(kPg, k2M), std::nullopt) << "no 2 MiB aligned start left in a 1 MiB window";
    EXPECT_EQ(w.find_free(kPg, kPg), 0x111000u);
    EXPECT_EQ(w.find_free(UINT64_MAX, kPg), std::nullopt);
}

// A fake KVM: the slots set, checked to never overlap and never exceed the ids given.
struct FakeSlots {
    struct Slot {
        uint64_t gpa, size;
        void* host;
        bool ro;
    };
    std::map<uint32_t, Slot> slots;
    int fail_with = 0; // the next creation fails with this errno
    uint32_t max_id = 0;
    MemslotSetter setter() {
        return [this](uint32_t id, uint64_t gpa, uint64_t size, void* host, bool ro) {
            if (size == 0) {
                EXPECT_EQ(slots.erase(id), 1u) << "deleting a slot never made";
                return 0;
            }
            if (fail_with) return std::exchange(fail_with, 0);
            EXPECT_FALSE(slots.contains(id)) << "slot id reused while live";
            EXPECT_LE(id, max_id);
            for (const auto& [other, s] : slots)
                EXPECT_TRUE(gpa + size <= s.gpa || s.gpa + s.size <= gpa) << "slots overlap";
            slots[id] = Slot{gpa, size, host, ro};
            return 0;
        };
    }
};

struct Window : ::testing::Test {
    static constexpr uint64_t kBase = 0x3800000000ull, kSize = 64 * k2M;
    std::filesystem::path file;
    int fd = -1;
    FakeSlots kvm;
    std::unique_ptr<FileWindow> w;
    std::string bytes;

    void SetUp() override {
        char tmpl[] = "/tmp/kvmgpu-window-XXXXXX";
        fd = mkstemp(tmpl);
        ASSERT_GE(fd, 0);
        file = tmpl;
        for (int i = 0; i < 5 * 4096 + 100; ++i) bytes.push_back(static_cast<char>('a' + i % 26));
        ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
        make(16);
    }
    void make(uint32_t max_slots) {
        kvm.max_id = 1 + max_slots - 1;
        w = FileWindow::create(kBase, kSize, kvm.setter(), WindowLimits{1, max_slots, 64});
        ASSERT_NE(w, nullptr);
    }
    void TearDown() override {
        if (fd >= 0) ::close(fd);
        std::filesystem::remove(file);
    }
    // What the guest reads at gpa, through the slot that covers it (as KVM would).
    std::optional<char> guest_read(uint64_t gpa) {
        for (const auto& [id, s] : kvm.slots)
            if (gpa >= s.gpa && gpa < s.gpa + s.size) return static_cast<char*>(s.host)[gpa - s.gpa];
        return std::nullopt;
    }
    std::optional<bool> slot_read_only(uint64_t gpa) {
        for (const auto& [id, s] : kvm.slots)
            if (gpa >= s.gpa && gpa < s.gpa + s.size) return s.ro;
        return std::nullopt;
    }
    // Slots == the runs of the pieces (each piece's class, maximal).
    void expect_slots_match_pieces() {
        EXPECT_EQ(kvm.slots.size(), w->slots());
        for (const MapsEntry& e : w->maps()) {
            const bool none = e.perms.substr(0, 3) == "---";
            for (uint64_t a = e.lo; a < e.hi; a += kPg) {
                if (none) {
                    EXPECT_FALSE(slot_read_only(a).has_value()) << std::hex << a << ": PROT_NONE has no slot";
                    continue;
                }
                ASSERT_TRUE(slot_read_only(a).has_value()) << std::hex << a;
                EXPECT_EQ(*slot_read_only(a), e.perms[1] != 'w') << std::hex << a;
            }
        }
    }
};

TEST_F(Window, FileMappingIsTheFilesPagesAndPrivate) {
    const auto at = w->place(bytes.size());
    ASSERT_TRUE(at);
    EXPECT_EQ(*at % k2M, 0u);
    ASSERT_EQ(w->map_file(*at, 8 * kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), 0);
    EXPECT_EQ(guest_read(*at + 3), bytes[3]);
    EXPECT_EQ(guest_read(*at + 5 * kPg + 99), bytes[5 * kPg + 99]);
    EXPECT_EQ(guest_read(*at + 5 * kPg + 100), '\0') << "past the file's end: zero, never SIGBUS";
    EXPECT_EQ(guest_read(*at + 7 * kPg), '\0');
    EXPECT_EQ(slot_read_only(*at), true);
    // The guest cannot write it; its data path refuses, the VMM's span does not hand it out for PROT_NONE.
    uint8_t b = 'Z';
    EXPECT_FALSE(w->access(*at + 1, std::span<uint8_t>(&b, 1), true));
    EXPECT_TRUE(w->access(*at + 1, std::span<uint8_t>(&b, 1), false));
    EXPECT_EQ(b, bytes[1]);
    // mprotect adds write: the slot is made again, writable; a write stays private.
    ASSERT_EQ(w->protect(*at, kPg, PROT_READ | PROT_WRITE), 0);
    EXPECT_EQ(slot_read_only(*at), false);
    EXPECT_EQ(slot_read_only(*at + kPg), true);
    b = 'Z';
    EXPECT_TRUE(w->access(*at + 1, std::span<uint8_t>(&b, 1), true));
    EXPECT_EQ(guest_read(*at + 1), 'Z');
    char on_disk = 0;
    ASSERT_EQ(::pread(fd, &on_disk, 1, 1), 1);
    EXPECT_EQ(on_disk, bytes[1]) << "the file is unchanged";
    // A second mapping of the file sees the file, not the first one's copy.
    const auto second = w->place(kPg);
    ASSERT_TRUE(second);
    ASSERT_NE(*second, *at);
    ASSERT_EQ(w->map_file(*second, kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), 0);
    EXPECT_EQ(guest_read(*second + 1), bytes[1]);
    // MADV_DONTNEED: the private copy goes, the file's byte is back.
    w->discard(*at, kPg);
    EXPECT_EQ(guest_read(*at + 1), bytes[1]);
    expect_slots_match_pieces();
    const auto maps = w->maps();
    ASSERT_GE(maps.size(), 2u);
    EXPECT_EQ(maps[0].perms, "rw-p");
    EXPECT_EQ(maps[0].name, "/lib/t.so");
    EXPECT_EQ(maps[1].offset, kPg);
    EXPECT_EQ(maps[1].perms, "r--p");
}

// What ld.so does with a library: the whole span read-only, then the data
// segment MAP_FIXED writable from the file, anonymous bss, a PROT_NONE gap,
// RELRO back to read-only, then dlclose's munmap. Slots follow, and all of
// them go at the end.
TEST_F(Window, LdSoSequenceKeepsSlotsMatchingAndReleasesThem) {
    const auto at = w->place(16 * kPg);
    ASSERT_TRUE(at);
    ASSERT_EQ(w->map_file(*at, 16 * kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), 0);
    EXPECT_EQ(kvm.slots.size(), 1u);
    ASSERT_EQ(w->map_file(*at + kPg, 2 * kPg, fd, kPg, bytes.size(), PROT_READ | PROT_EXEC, "/lib/t.so"), 0);
    EXPECT_EQ(kvm.slots.size(), 1u) << "read-only beside read-only: the same slot";
    ASSERT_EQ(w->protect(*at + 3 * kPg, 2 * kPg, PROT_NONE), 0);
    ASSERT_EQ(w->map_file(*at + 5 * kPg, 2 * kPg, fd, 3 * kPg, bytes.size(), PROT_READ | PROT_WRITE, "/lib/t.so"), 0);
    ASSERT_EQ(w->map_anonymous(*at + 7 * kPg, 9 * kPg, PROT_READ | PROT_WRITE), 0);
    EXPECT_EQ(guest_read(*at + 5 * kPg), bytes[3 * kPg]);
    EXPECT_EQ(guest_read(*at + 8 * kPg), '\0');
    ASSERT_EQ(w->protect(*at + 5 * kPg, kPg, PROT_READ), 0); // RELRO
    expect_slots_match_pieces();
    EXPECT_EQ(w->protect(*at + 15 * kPg, 2 * kPg, PROT_READ), -ENOMEM) << "past the mapping: Linux's ENOMEM";
    uint8_t b = 1;
    EXPECT_FALSE(w->access(*at + 3 * kPg, std::span<uint8_t>(&b, 1), false)) << "PROT_NONE gap";
    EXPECT_FALSE(w->span(*at + 3 * kPg, 1)) << "the VMM takes no pointer there either";
    EXPECT_TRUE(w->span(*at, 3 * kPg));
    ASSERT_EQ(w->unmap(*at, 16 * kPg), 0);
    EXPECT_TRUE(kvm.slots.empty());
    EXPECT_EQ(w->pieces(), 0u);
    EXPECT_FALSE(w->span(*at, 1));
}

TEST_F(Window, SlotCapRefusesCleanlyAndChangesNothing) {
    make(2);
    const auto a = w->place(kPg);
    ASSERT_EQ(w->map_file(*a, kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), 0);
    const auto b = w->place(kPg);
    ASSERT_EQ(w->map_file(*b, kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), 0);
    const auto c = w->place(kPg);
    EXPECT_EQ(w->map_file(*c, kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), -ENOMEM);
    EXPECT_EQ(w->map_anonymous(*c, kPg, PROT_READ), -ENOMEM);
    EXPECT_FALSE(w->span(*c, 1)) << "nothing mapped by the refused call";
    // A PROT_NONE mapping needs no slot.
    EXPECT_EQ(w->map_anonymous(*c, kPg, PROT_NONE), 0);
    // Cutting a slot's run in two would need a third.
    ASSERT_EQ(w->unmap(*b, kPg), 0);
    ASSERT_EQ(w->map_file(*a, 3 * kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), 0);
    EXPECT_EQ(w->unmap(*a + kPg, kPg), 0) << "two slots: fits";
    ASSERT_EQ(w->map_file(*b, kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), -ENOMEM);
    EXPECT_EQ(w->protect(*a + 2 * kPg, kPg, PROT_READ | PROT_WRITE), 0) << "a run's class changed in place";
    expect_slots_match_pieces();
    EXPECT_LE(kvm.slots.size(), 2u);
}

TEST_F(Window, KvmRefusingASlotLeavesTheRunServedByExits) {
    const auto a = w->place(kPg);
    kvm.fail_with = ENOMEM;
    ASSERT_EQ(w->map_file(*a, kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), 0);
    EXPECT_TRUE(kvm.slots.empty());
    uint8_t b = 0;
    EXPECT_TRUE(w->access(*a + 2, std::span<uint8_t>(&b, 1), false));
    EXPECT_EQ(b, bytes[2]);
    // The next change in the neighbourhood makes the slot.
    ASSERT_EQ(w->protect(*a, kPg, PROT_READ | PROT_EXEC), 0);
    EXPECT_EQ(kvm.slots.size(), 1u);
}

TEST_F(Window, RemapShrinksGrowsAnonymousAndRefusesFileGrowth) {
    const auto a = w->place(4 * kPg);
    ASSERT_EQ(w->map_anonymous(*a, 4 * kPg, PROT_READ | PROT_WRITE), 0);
    uint8_t v = 42;
    ASSERT_TRUE(w->access(*a + 5, std::span<uint8_t>(&v, 1), true));
    EXPECT_EQ(w->remap(*a, 4 * kPg, 2 * kPg, false), static_cast<int64_t>(*a));
    EXPECT_FALSE(w->span(*a + 2 * kPg, 1));
    EXPECT_EQ(w->remap(*a, 2 * kPg, 6 * kPg, false), static_cast<int64_t>(*a)) << "grown in place";
    // Something right after: growing needs a move.
    ASSERT_EQ(w->map_anonymous(*a + 6 * kPg, kPg, PROT_READ), 0);
    EXPECT_EQ(w->remap(*a, 6 * kPg, 8 * kPg, false), -ENOMEM);
    const int64_t moved = w->remap(*a, 6 * kPg, 8 * kPg, true);
    ASSERT_GT(moved, 0);
    EXPECT_NE(static_cast<uint64_t>(moved), *a);
    EXPECT_EQ(guest_read(static_cast<uint64_t>(moved) + 5), 42) << "contents moved";
    EXPECT_FALSE(w->span(*a, 1)) << "the old place unmapped";
    const auto f = w->place(kPg);
    ASSERT_EQ(w->map_file(*f, kPg, fd, 0, bytes.size(), PROT_READ, "/lib/t.so"), 0);
    EXPECT_EQ(w->remap(*f, kPg, 2 * kPg, true), -ENOMEM);
    EXPECT_EQ(w->remap(*f, 2 * kPg, 3 * kPg, true), -EFAULT) << "not one mapping";
    EXPECT_EQ(w->remap(UINT64_MAX & ~(kPg - 1), kPg, kPg, true), -EFAULT);
    expect_slots_match_pieces();
}

TEST_F(Window, HostileRangesAreRefusedOrClipped) {
    EXPECT_EQ(w->map_file(kBase - kPg, 2 * kPg, fd, 0, bytes.size(), PROT_READ, "x"), -EINVAL) << "across the edge";
    EXPECT_EQ(w->map_file(kBase + kSize - kPg, 2 * kPg, fd, 0, bytes.size(), PROT_READ, "x"), -EINVAL);
    EXPECT_EQ(w->map_file(kBase, kPg, fd, UINT64_MAX & ~(kPg - 1), bytes.size(), PROT_READ, "x"), -EOVERFLOW);
    EXPECT_EQ(w->map_file(kBase + 1, kPg, fd, 0, bytes.size(), PROT_READ, "x"), -EINVAL);
    EXPECT_EQ(w->map_anonymous(UINT64_MAX - kPg + 1, kPg, PROT_READ), -EINVAL);
    EXPECT_EQ(w->unmap(UINT64_MAX - kPg + 1, 2 * kPg), 0) << "wraps: nothing";
    EXPECT_EQ(w->unmap(0, UINT64_MAX), 0) << "all of it, the window's part included";
    EXPECT_FALSE(w->place(kSize + 1));
    EXPECT_FALSE(w->place(0));
    EXPECT_FALSE(w->overlaps(UINT64_MAX, 2));
    EXPECT_TRUE(w->overlaps(kBase - 1, 2));
    EXPECT_FALSE(w->span(kBase, UINT64_MAX));
    uint8_t b = 0;
    EXPECT_FALSE(w->access(kBase + kSize - 1, std::span<uint8_t>(&b, 1), false)) << "a hole";
    // Piece cap (64): the 65th piece is refused.
    int64_t last = 0;
    for (uint64_t i = 0; i < 70; ++i) last = w->map_anonymous(kBase + 2 * i * kPg, kPg, PROT_NONE);
    EXPECT_EQ(last, -ENOMEM);
    EXPECT_LE(w->pieces(), 64u);
}

TEST(WindowSlotCap, BoundedByKvmAndTheFixedCap) {
    EXPECT_EQ(window_slot_cap(32764, 1), kMaxWindowSlots);
    EXPECT_EQ(window_slot_cap(509, 1), 508u);
    EXPECT_EQ(window_slot_cap(1, 1), 0u);
    EXPECT_EQ(window_slot_cap(0, 1), 0u) << "KVM says nothing: no window";
    EXPECT_EQ(window_slot_cap(-1, 1), 0u);
}

} // namespace
} // namespace kvmgpu::linux_abi
