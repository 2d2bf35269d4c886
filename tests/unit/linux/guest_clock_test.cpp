// GuestClock's lines (what the vDSO computes from the clock page) and the
// embedded vDSO image as glibc will read it.
#include "kvmtool-gpu/vmm/linux/guest_clock.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>

extern "C" const uint8_t kvmgpu_vdso_image[];
extern "C" const uint64_t kvmgpu_vdso_image_size;

namespace kvmgpu::linux_abi {
namespace {

constexpr uint64_t kKhz = 2'600'000; // 2.6 GHz
constexpr int64_t kS = 1'000'000'000;

HostClocks at(uint64_t tsc, int64_t mono) { return {tsc, mono, mono + 1'700'000'000 * kS, mono + 5, mono - 7}; }

TEST(GuestClock, FirstLineIsTheHostsClockAtKvmsRate) {
    const GuestClock c(kKhz, 0, at(1'000'000, 50 * kS));
    EXPECT_EQ(c.page().valid, 1u);
    EXPECT_EQ(c.mono_at(1'000'000), 50 * kS);
    EXPECT_NEAR(c.mono_at(1'000'000 + kKhz * 1000), 51 * kS, 1); // one second of ticks
    EXPECT_EQ(c.page().realtime_offset_ns, 1'700'000'000 * kS);
    EXPECT_EQ(c.page().boottime_offset_ns, 5);
    EXPECT_EQ(c.page().raw_offset_ns, -7);
    EXPECT_EQ(c.mono_at(999'000), 50 * kS) << "a TSC behind the base reads as the base";
}

TEST(GuestClock, TscOffsetMovesTheBase) {
    const GuestClock c(kKhz, 1000, at(5000, kS));
    EXPECT_EQ(c.page().tsc_base, 6000u);
    EXPECT_EQ(c.mono_at(5000), kS);
}

TEST(GuestClock, DueAfterASecondOfTicks) {
    const GuestClock c(kKhz, 0, at(0, kS));
    EXPECT_FALSE(c.due(kKhz * 1000 - 1));
    EXPECT_TRUE(c.due(kKhz * 1000));
}

// The TSC really runs 100 ppm slower than KVM said: the guest falls behind,
// steps forward at the next line, and then follows the measured rate.
TEST(GuestClock, BehindStepsForwardAndTakesTheMeasuredRate) {
    GuestClock c(kKhz, 0, at(0, 0));
    const uint64_t ticks = kKhz * 1000 - kKhz / 10; // 1 s of host time at -100 ppm
    const int64_t before = c.mono_at(ticks);
    EXPECT_LT(before, kS);
    c.follow(at(ticks, kS));
    EXPECT_EQ(c.mono_at(ticks), kS);
    EXPECT_NEAR(static_cast<double>(c.mono_at(2 * ticks)), 2.0 * kS, 2.0);
}

// A guest ahead is never set back: continuous at the new base, slowed by at
// most kMaxSlewNs over the next second.
TEST(GuestClock, AheadIsSlowedNotSetBack) {
    GuestClock c(kKhz, 0, at(0, 0));
    const uint64_t second = kKhz * 1000;
    const int64_t ahead = 2'000'000;
    c.follow(at(second, kS - ahead)); // the host says 2 ms less passed
    EXPECT_NEAR(c.mono_at(second), kS, 1) << "continuous";
    const int64_t next = c.mono_at(2 * second) - c.mono_at(second);
    const double host_second = (kS - ahead) * 1.0; // the host's clock over the next `second` ticks
    EXPECT_NEAR(next, host_second * (1.0 - 1.0 * GuestClock::kMaxSlewNs / kS), 2.0);
}

TEST(GuestClock, NeverGoesBackOverNoisyReadings) {
    std::mt19937_64 rng(7);
    GuestClock c(kKhz, 0, at(0, 0));
    int64_t last = 0;
    uint64_t tsc = 0;
    for (int i = 0; i < 2000; ++i) {
        tsc += kKhz * (200 + rng() % 1600); // 0.2 to 1.8 s
        const int64_t host = static_cast<int64_t>(tsc * 1000 / (kKhz / 1000)) + // ns at 2.6 ticks per ns
                             static_cast<int64_t>(rng() % 400'000) - 200'000; // +-200 us of noise
        const int64_t before = c.mono_at(tsc);
        ASSERT_GE(before, last);
        c.follow(at(tsc, host));
        ASSERT_GE(c.mono_at(tsc), before);
        last = c.mono_at(tsc);
    }
}

TEST(GuestClock, OlderReadingsAreIgnored) {
    GuestClock c(kKhz, 0, at(1000, kS));
    const kvmgpu_vvar page = c.page();
    c.follow(at(500, kS / 2));
    const kvmgpu_vvar after = c.page();
    EXPECT_EQ(std::memcmp(&page, &after, sizeof page), 0);
}

// What glibc's setup_vdso and symbol lookup need: a shared object of one
// loadable segment that fits its place, a dynamic section, no relocations,
// and the five names in version LINUX_2.6.
TEST(VdsoImage, IsARelocationFreeSharedObjectWithLinuxNames) {
    ASSERT_GE(kvmgpu_vdso_image_size, sizeof(Elf64_Ehdr));
    ASSERT_LE(kvmgpu_vdso_image_size, KVMGPU_LINUX_VDSO_MAX);
    Elf64_Ehdr eh;
    std::memcpy(&eh, kvmgpu_vdso_image, sizeof eh);
    ASSERT_EQ(std::memcmp(eh.e_ident, ELFMAG, SELFMAG), 0);
    EXPECT_EQ(eh.e_type, ET_DYN);
    EXPECT_EQ(eh.e_machine, EM_X86_64);
    int loads = 0;
    const Elf64_Dyn* dyn = nullptr;
    for (int i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph;
        std::memcpy(&ph, kvmgpu_vdso_image + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_LOAD) {
            ++loads;
            EXPECT_EQ(ph.p_vaddr, 0u);
            EXPECT_LE(ph.p_memsz, kvmgpu_vdso_image_size);
        }
        if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const Elf64_Dyn*>(kvmgpu_vdso_image + ph.p_offset);
    }
    EXPECT_EQ(loads, 1);
    ASSERT_NE(dyn, nullptr);
    uint64_t symtab = 0, strtab = 0, hash = 0, verdef = 0;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
        EXPECT_NE(dyn->d_tag, DT_RELA);
        EXPECT_NE(dyn->d_tag, DT_REL);
        EXPECT_NE(dyn->d_tag, DT_TEXTREL);
        EXPECT_NE(dyn->d_tag, DT_JMPREL);
        if (dyn->d_tag == DT_SYMTAB) symtab = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_HASH) hash = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_VERDEF) verdef = dyn->d_un.d_ptr;
    }
    ASSERT_TRUE(symtab && strtab && hash && verdef);
    uint32_t nsyms;
    std::memcpy(&nsyms, kvmgpu_vdso_image + hash + 4, 4); // DT_HASH: nbucket, nchain (= symbols)
    std::set<std::string> names;
    for (uint32_t i = 0; i < nsyms; ++i) {
        Elf64_Sym sym;
        std::memcpy(&sym, kvmgpu_vdso_image + symtab + i * sizeof sym, sizeof sym);
        if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF)
            names.insert(reinterpret_cast<const char*>(kvmgpu_vdso_image + strtab + sym.st_name));
    }
    EXPECT_EQ(names, (std::set<std::string>{"__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time",
                                            "__vdso_clock_getres", "__vdso_getcpu"}));
    std::string versions;
    for (uint64_t at = verdef;;) {
        Elf64_Verdef vd;
        std::memcpy(&vd, kvmgpu_vdso_image + at, sizeof vd);
        Elf64_Verdaux aux;
        std::memcpy(&aux, kvmgpu_vdso_image + at + vd.vd_aux, sizeof aux);
        versions += std::string(reinterpret_cast<const char*>(kvmgpu_vdso_image + strtab + aux.vda_name)) + ";";
        if (!vd.vd_next) break;
        at += vd.vd_next;
    }
    EXPECT_NE(versions.find("LINUX_2.6;"), std::string::npos) << versions;
}

} // namespace
} // namespace kvmgpu::linux_abi
