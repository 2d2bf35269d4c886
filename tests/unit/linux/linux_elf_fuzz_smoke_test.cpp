// The ELF loader's fuzz body (tests/fuzz/linux_elf_fuzz_body.h) on a fixed,
// seeded stream of hostile files, so every build runs it: valid static,
// PIE and dynamic executables with bytes of their headers, program headers
// and PT_INTERP path changed, fields set to edge values, and files cut
// short. The body traps on any read outside the file, any exception but
// ImageError, and any accepted image outside its limit.
#include <elf.h>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/fuzz/linux_elf_fuzz_body.h"
#include "tests/unit/linux/linux_elf_builder.h"

namespace kvmgpu::linux_abi {
namespace {

std::vector<uint8_t> with_interp(bool pie, const std::string& path, uint64_t len) {
    LinuxElf e(pie);
    e.ph.push_back(LinuxElf::seg(PT_INTERP, PF_R, 0x200, 0x400200, len, len));
    auto b = e.bytes();
    std::memcpy(b.data() + 0x200, path.data(), std::min<size_t>(path.size(), b.size() - 0x200));
    return b;
}

std::vector<std::vector<uint8_t>> seeds() {
    const std::string ld("/lib64/ld-linux-x86-64.so.2\0", 28);
    return {LinuxElf(false).bytes(), LinuxElf(true).bytes(), with_interp(true, ld, ld.size()),
            with_interp(false, "../../../../etc/passwd", 23), with_interp(true, std::string(300, 'a'), 4096),
            with_interp(true, std::string("/lib\0/x", 8), 8), with_interp(true, "", 0),
            with_interp(true, ld, ~0ull)};
}

TEST(LinuxElfFuzzSmoke, HostileFilesAreRefusedCleanly) {
    std::mt19937_64 rng(41);
    const uint64_t edges[] = {0, 1, 0x1000, 0x7fffffff, 0xffffffff, 1ull << 47, 1ull << 63, ~0ull, ~0ull - 0xfff};
    for (const auto& seed : seeds()) {
        kvmgpu::fuzz::run_linux_elf_input(seed.data(), seed.size());
        for (int i = 0; i < 400; ++i) {
            std::vector<uint8_t> b = seed;
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int k = 0; k < edits; ++k) {
                // Mostly the ELF header and program headers (the first 0x140 bytes), sometimes PT_INTERP's string.
                const uint64_t at = (rng() % 4 == 0) ? 0x200 + rng() % 64 : rng() % 0x140;
                if (rng() % 2) {
                    b[at] = static_cast<uint8_t>(rng());
                } else {
                    const uint64_t v = edges[rng() % std::size(edges)];
                    std::memcpy(&b[at & ~uint64_t{7}], &v, 8);
                }
            }
            if (rng() % 8 == 0) b.resize(rng() % b.size());
            kvmgpu::fuzz::run_linux_elf_input(b.data(), b.size());
        }
    }
    kvmgpu::fuzz::run_linux_elf_input(nullptr, 0);
}

} // namespace
} // namespace kvmgpu::linux_abi
