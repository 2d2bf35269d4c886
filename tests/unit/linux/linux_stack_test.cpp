// The Linux start-up stack: argc, argv, envp, auxv and the strings, read
// back the way glibc's _start reads them.
#include <elf.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"
#include "kvmtool-gpu/vmm/linux/linux_stack.h"

namespace kvmgpu::linux_abi {
namespace {

constexpr uint64_t kTop = 0x1000000;

struct Parsed {
    uint64_t argc = 0;
    std::vector<std::string> argv, envp;
    std::map<uint64_t, uint64_t> aux;
    bool aux_terminated = false;
};

Parsed parse(const StartupStack& s) {
    auto word = [&](uint64_t addr) {
        uint64_t v;
        std::memcpy(&v, &s.bytes.at(addr - s.sp), 8);
        return v;
    };
    auto str = [&](uint64_t addr) { return std::string(reinterpret_cast<const char*>(&s.bytes.at(addr - s.sp))); };
    Parsed p;
    uint64_t at = s.sp;
    p.argc = word(at);
    at += 8;
    for (uint64_t i = 0; i < p.argc; ++i, at += 8) p.argv.push_back(str(word(at)));
    EXPECT_EQ(word(at), 0u);
    at += 8;
    for (; word(at); at += 8) p.envp.push_back(str(word(at)));
    at += 8;
    for (; at + 16 <= kTop; at += 16) {
        if (word(at) == AT_NULL) {
            p.aux_terminated = true;
            break;
        }
        p.aux[word(at)] = word(at + 8);
    }
    return p;
}

StartupInfo sample() {
    StartupInfo info;
    info.argv = {"prog", "one", "two words"};
    info.envp = {"HOME=/", "K=V"};
    info.auxv = {{AT_PAGESZ, 4096}, {AT_ENTRY, 0x401000}, {AT_KVMGPU_BOOT_INFO, KVMGPU_BOOT_INFO_GPA}};
    info.execfn = "/prog";
    for (int i = 0; i < 16; ++i) info.random[i] = static_cast<uint8_t>(i * 7 + 1);
    return info;
}

TEST(LinuxStack, ReadsBackAsGlibcSeesIt) {
    const auto s = build_startup_stack(kTop, sample());
    EXPECT_EQ(s.sp % 16, 0u);
    EXPECT_EQ(s.sp + s.bytes.size(), kTop);
    const auto p = parse(s);
    EXPECT_EQ(p.argc, 3u);
    EXPECT_EQ(p.argv, (std::vector<std::string>{"prog", "one", "two words"}));
    EXPECT_EQ(p.envp, (std::vector<std::string>{"HOME=/", "K=V"}));
    ASSERT_TRUE(p.aux_terminated);
    EXPECT_EQ(p.aux.at(AT_PAGESZ), 4096u);
    EXPECT_EQ(p.aux.at(AT_ENTRY), 0x401000u);
    EXPECT_EQ(p.aux.at(AT_KVMGPU_BOOT_INFO), KVMGPU_BOOT_INFO_GPA);
    const uint64_t rnd = p.aux.at(AT_RANDOM);
    ASSERT_GE(rnd, s.sp);
    EXPECT_EQ(std::memcmp(&s.bytes[rnd - s.sp], sample().random.data(), 16), 0);
    EXPECT_STREQ(reinterpret_cast<const char*>(&s.bytes[p.aux.at(AT_EXECFN) - s.sp]), "/prog");
    EXPECT_STREQ(reinterpret_cast<const char*>(&s.bytes[p.aux.at(AT_PLATFORM) - s.sp]), "x86_64");
}

TEST(LinuxStack, CallerCannotOverrideThePointerEntries) {
    auto info = sample();
    info.auxv.push_back({AT_RANDOM, 0x1234});
    info.auxv.push_back({AT_NULL, 0});
    const auto s = build_startup_stack(kTop, info);
    const auto p = parse(s);
    EXPECT_NE(p.aux.at(AT_RANDOM), 0x1234u);
    EXPECT_EQ(p.aux.count(AT_ENTRY), 1u); // the early AT_NULL did not cut the vector
}

TEST(LinuxStack, BadInputIsRefused) {
    auto info = sample();
    info.argv.push_back(std::string("a\0b", 3));
    EXPECT_THROW(build_startup_stack(kTop, info), std::invalid_argument);
    info = sample();
    info.envp.push_back(std::string(kMaxStartupBytes, 'x'));
    EXPECT_THROW(build_startup_stack(kTop, info), std::invalid_argument);
    EXPECT_THROW(build_startup_stack(kTop + 8, sample()), std::invalid_argument);
    EXPECT_THROW(build_startup_stack(0x80, sample()), std::invalid_argument);
}

// AT_RANDOM (glibc's stack canary and pointer guard): repeatable with
// --seed, the host's and different each run without (2^-128 to collide).
TEST(StartupRandom, SeededRepeatsUnseededDiffers) {
    EXPECT_EQ(startup_random(5), startup_random(5));
    EXPECT_NE(startup_random(5), startup_random(6));
    EXPECT_NE(startup_random(std::nullopt), startup_random(std::nullopt));
}

// The numbers of the auxiliary vector a dynamic executable's interpreter
// reads: AT_BASE its own bias, AT_ENTRY/AT_PHDR the program's, as Linux gives.
TEST(LinuxAuxv, DynamicExecutableGetsWhatLinuxGives) {
    LinuxImage exe;
    exe.entry = 0x401040;
    exe.phdr = 0x400040;
    exe.phnum = 13;
    std::map<uint64_t, uint64_t> aux;
    for (const auto& [k, v] : linux_auxv(exe, 0x1f00000, 0xbfebfbff, 3328)) {
        EXPECT_EQ(aux.count(k), 0u) << "AT " << k << " twice";
        aux[k] = v;
    }
    EXPECT_EQ(aux.at(AT_BASE), 0x1f00000u);
    EXPECT_EQ(aux.at(AT_ENTRY), 0x401040u);
    EXPECT_EQ(aux.at(AT_PHDR), 0x400040u);
    EXPECT_EQ(aux.at(AT_PHNUM), 13u);
    EXPECT_EQ(aux.at(AT_PHENT), sizeof(Elf64_Phdr));
    EXPECT_EQ(aux.at(AT_PAGESZ), 4096u);
    EXPECT_EQ(aux.at(AT_SECURE), 0u);
    EXPECT_EQ(aux.at(AT_HWCAP), 0xbfebfbffu);
    EXPECT_EQ(aux.at(AT_CLKTCK), 100u);
    EXPECT_EQ(aux.at(kAtMinSigStkSz), 3328u) << "the signal frame's size (guest_signals.h)";
    for (uint64_t id : {AT_UID, AT_EUID, AT_GID, AT_EGID}) EXPECT_EQ(aux.at(id), 0u);
    EXPECT_EQ(linux_auxv(exe, 0, 0, 3328).at(4).second, 0u); // static: AT_BASE 0
    EXPECT_EQ(linux_auxv(exe, 0, 0, 3328).at(4).first, uint64_t{AT_BASE});
    // On the stack with the pointer entries linux_stack adds.
    StartupInfo info;
    info.argv = {"/usr/bin/prog"};
    info.execfn = "/usr/bin/prog";
    info.auxv = linux_auxv(exe, 0x1f00000, 0, 3328);
    const StartupStack st = build_startup_stack(0x800000, info);
    EXPECT_EQ(st.sp % 16, 0u);
}

} // namespace
} // namespace kvmgpu::linux_abi
