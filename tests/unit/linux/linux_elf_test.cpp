// Static Linux executables: told apart from project images, every header
// field checked, segments loaded at their virtual addresses (a static-pie
// at KVMGPU_LINUX_PIE_BASE), AT_PHDR found; PT_INTERP's path and the
// interpreter's placement as hostile input.
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/vmm/linux/linux_elf.h"
#include "kvmtool-gpu/vmm/linux/linux_interp.h"
#include "memmap/backing.h"
#include "tests/support/tiny_elf.h"
#include "tests/unit/linux/linux_elf_builder.h"

namespace kvmgpu::linux_abi {
namespace {

constexpr uint64_t kLimit = 32ull << 20;

ImageKind classify(std::vector<uint8_t> b) { return classify_image(ImageBytes(b)); }
LinuxImage inspect(std::vector<uint8_t> b, uint64_t limit = kLimit) { return inspect_linux_elf(ImageBytes(b), limit); }

std::string refusal(std::vector<uint8_t> b, uint64_t limit = kLimit) {
    try {
        inspect(b, limit);
    } catch (const ImageError& e) {
        return e.what();
    }
    return "accepted";
}

TEST(LinuxElf, ProjectImagesAndLinuxExecutablesAreToldApart) {
    EXPECT_EQ(classify(test::tiny_elf(test::code::spin)), ImageKind::Project);
    EXPECT_EQ(classify(LinuxElf().bytes()), ImageKind::Linux);
    EXPECT_EQ(classify(LinuxElf(true).bytes()), ImageKind::Linux);
    LinuxElf only_load;
    only_load.ph.resize(2);
    EXPECT_EQ(classify(only_load.bytes()), ImageKind::Project); // guest.ld's shape, whoever linked it
}

// PT_INTERP: the path is read and checked as hostile bytes.
TEST(LinuxElf, InterpreterPathIsReadAndChecked) {
    // The header says `len` bytes at `off`; the file holds `path`'s bytes there (its NUL included).
    auto with_interp = [](std::string_view path, uint64_t len, uint64_t off = 0x200) {
        LinuxElf e;
        e.ph.push_back(LinuxElf::seg(PT_INTERP, PF_R, off, 0x400000 + off, len, len));
        auto b = e.bytes();
        if (off < b.size()) std::memcpy(b.data() + off, path.data(), std::min<uint64_t>(path.size(), b.size() - off));
        return b;
    };
    const char good[] = "/lib64/ld-linux-x86-64.so.2";
    const std::string_view g(good, sizeof good);
    EXPECT_EQ(classify(with_interp(g, sizeof good)), ImageKind::Linux);
    EXPECT_EQ(inspect(with_interp(g, sizeof good)).interp, good);
    EXPECT_EQ(inspect(LinuxElf().bytes()).interp, "");
    EXPECT_NE(refusal(with_interp(std::string_view("/lib/ld.so!", 11), 11)).find("not one NUL-terminated string"), std::string::npos);
    EXPECT_NE(refusal(with_interp(std::string_view("/lib\0/ld.so", 12), 12)).find("not one NUL-terminated string"), std::string::npos);
    EXPECT_NE(refusal(with_interp(std::string_view("", 1), 1)).find("interpreter path: bad length"), std::string::npos);
    EXPECT_NE(refusal(with_interp(g, 5000)).find("interpreter path: bad length"), std::string::npos);
    EXPECT_NE(refusal(with_interp(g, sizeof good, 0x1ff0)).find("past the end"), std::string::npos);
    EXPECT_NE(refusal(with_interp(g, sizeof good, ~0ull - 4)).find("past the end"), std::string::npos);
    LinuxElf twice;
    twice.ph.push_back(LinuxElf::seg(PT_INTERP, PF_R, 0x200, 0x400200, sizeof good, sizeof good));
    twice.ph.push_back(LinuxElf::seg(PT_INTERP, PF_R, 0x200, 0x400200, sizeof good, sizeof good));
    auto b = twice.bytes();
    std::memcpy(b.data() + 0x200, good, sizeof good);
    EXPECT_NE(refusal(b).find("more than one interpreter"), std::string::npos);
}

// An ET_DYN goes where it is told: the interpreter's placement.
TEST(LinuxElf, SharedObjectLoadsAtTheBiasGiven) {
    const auto bytes = LinuxElf(true).bytes();
    const auto img = inspect_linux_elf_at(ImageBytes(bytes), 0x1200000, kLimit);
    EXPECT_EQ(img.base, 0x1200000u);
    EXPECT_EQ(img.entry, 0x1201000u);
    EXPECT_EQ(img.lowest, 0x1200000u);
    EXPECT_THROW(inspect_linux_elf_at(ImageBytes(bytes), 0x1200010, kLimit), ImageError); // not page aligned
    EXPECT_THROW(inspect_linux_elf_at(ImageBytes(bytes), kLimit - 0x2000, kLimit), ImageError); // past the limit
    EXPECT_THROW(inspect_linux_elf_at(ImageBytes(bytes), ~0ull & ~0xfffull, kLimit), ImageError); // wraps
}

TEST(LinuxElf, StaticExecutableIsInspectedAtItsAddresses) {
    const auto img = inspect(LinuxElf().bytes());
    EXPECT_FALSE(img.pie);
    EXPECT_EQ(img.base, 0u);
    EXPECT_EQ(img.entry, 0x401000u);
    EXPECT_EQ(img.phdr, 0x400000u + sizeof(Elf64_Ehdr));
    EXPECT_EQ(img.phnum, 4u);
    EXPECT_EQ(img.lowest, 0x400000u);
    EXPECT_EQ(img.end, 0x402800u + 0x3000);
}

TEST(LinuxElf, StaticPieIsPlacedAtThePieBase) {
    const auto img = inspect(LinuxElf(true).bytes());
    EXPECT_TRUE(img.pie);
    EXPECT_EQ(img.base, KVMGPU_LINUX_PIE_BASE);
    EXPECT_EQ(img.entry, KVMGPU_LINUX_PIE_BASE + 0x1000);
    EXPECT_EQ(img.phdr, KVMGPU_LINUX_PIE_BASE + sizeof(Elf64_Ehdr));
}

TEST(LinuxElf, BadHeadersAreRefusedWithOneLine) {
    auto with = [](auto edit) {
        LinuxElf e;
        edit(e);
        return refusal(e.bytes());
    };
    EXPECT_NE(with([](LinuxElf& e) { e.eh.e_machine = EM_AARCH64; }).find("not an x86-64 image"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.eh.e_ident[EI_CLASS] = ELFCLASS32; }).find("not a 64-bit ELF"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.eh.e_type = ET_REL; }).find("not an executable"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.eh.e_entry = 0x402900; }).find("entry point"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.ph[1].p_filesz = 0x4000; }).find("file size exceeds"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.ph[1].p_offset = 0x1f00; }).find("past the end of the file"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.ph[1].p_vaddr = 0x400800; }).find("overlap"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.ph[1].p_vaddr = ~0ull - 0x100; }).find("wraps"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.ph[1].p_align = 0x1001; }).find("alignment"), std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { // the first segment no longer holds the headers
                  e.ph[0].p_offset = 0x1000, e.ph[0].p_vaddr = 0x401000, e.ph[0].p_filesz = e.ph[0].p_memsz = 0x800;
              }).find("AT_PHDR"),
              std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) {
                  for (auto& p : e.ph) p.p_vaddr -= 0x380000;
                  e.eh.e_entry -= 0x380000;
              }).find("boot area"),
              std::string::npos);
    EXPECT_NE(with([](LinuxElf& e) { e.eh.e_phnum = 0, e.ph.clear(); }).find("program header count"), std::string::npos);
    EXPECT_NE(refusal(LinuxElf().bytes(), 0x403000).find("beyond"), std::string::npos);
    auto truncated = LinuxElf().bytes();
    truncated.resize(100);
    EXPECT_NE(refusal(truncated).find("truncated"), std::string::npos);
}

TEST(LinuxElf, LoadCopiesFileBytesAndZeroesTheRest) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 16ull << 20));
    auto host = mem.translate(memmap::GuestPhysAddr{0}, 16ull << 20);
    std::memset(host->data(), 0xEE, host->size()); // whatever was there before
    const auto img = load_linux_elf(ImageBytes(LinuxElf().bytes()), mem, kLimit);
    EXPECT_EQ((*host)[img.entry], 0xCC);
    EXPECT_EQ((*host)[0x402800], 0x5A);
    EXPECT_EQ((*host)[0x402800 + 0x800], 0);     // .bss
    EXPECT_EQ((*host)[0x402800 + 0x2fff], 0);
    EXPECT_EQ((*host)[0x402800 + 0x3000], 0xEE); // past memsz: untouched
    Elf64_Ehdr eh;
    std::memcpy(&eh, host->data() + 0x400000, sizeof eh);
    EXPECT_EQ(eh.e_machine, EM_X86_64); // the headers are where AT_PHDR says
}


// The interpreter: a shared object, placed at the top of [lo, hi) on its
// alignment, refused when it is anything else or does not fit.
TEST(LinuxInterp, PlacedAtTheTopAlignedAndChecked) {
    constexpr uint64_t lo = 0x800000, hi = 0x1e00000;
    const auto so = LinuxElf(true).bytes(); // pages [0, 0x6000): code, then data and .bss
    const uint64_t base = place_interpreter(ImageBytes(so), lo, hi);
    EXPECT_EQ(base % 4096, 0u);
    EXPECT_EQ(base, hi - 0x6000);
    const auto img = inspect_linux_elf_at(ImageBytes(so), base, hi);
    EXPECT_LE(img.end, hi);

    LinuxElf aligned(true);
    aligned.ph[0].p_align = aligned.ph[1].p_align = 0x200000;
    EXPECT_EQ(place_interpreter(ImageBytes(aligned.bytes()), lo, hi) % 0x200000, 0u);
    LinuxElf huge_align(true); // legal ELF, capped at 2 MiB
    huge_align.ph[0].p_align = 1ull << 62;
    EXPECT_EQ(place_interpreter(ImageBytes(huge_align.bytes()), lo, hi) % kMaxInterpAlign, 0u);

    auto refused_in = [&](std::vector<uint8_t> b, uint64_t l, uint64_t h) -> std::string {
        try {
            place_interpreter(ImageBytes(b), l, h);
        } catch (const ImageError& e) {
            return e.what();
        }
        return "accepted";
    };
    auto refused = [&](std::vector<uint8_t> b) { return refused_in(std::move(b), lo, hi); };
    EXPECT_NE(refused(LinuxElf(false).bytes()).find("not a shared object"), std::string::npos);
    LinuxElf chained(true);
    const char path[] = "/lib/other.so";
    chained.ph.push_back(LinuxElf::seg(PT_INTERP, PF_R, 0x200, 0x200, sizeof path, sizeof path));
    auto c = chained.bytes();
    std::memcpy(c.data() + 0x200, path, sizeof path);
    EXPECT_NE(refused(c).find("names an interpreter of its own"), std::string::npos);
    EXPECT_NE(refused_in(so, lo, lo + 0x5000).find("do not fit"), std::string::npos);
    EXPECT_NE(refused_in(so, hi, lo).find("do not fit"), std::string::npos);
    LinuxElf far(true); // a segment far up: its span cannot fit
    far.ph[1].p_vaddr = (1ull << 40) + 0x800;
    EXPECT_NE(refused(far.bytes()).find("fit"), std::string::npos);
    EXPECT_NE(refused(std::vector<uint8_t>(so.begin(), so.begin() + 100)).find("guest image refused"), std::string::npos);
    // Every prefix of the file is refused or placed inside [lo, hi): never out of it.
    for (size_t n = 0; n < so.size(); n += 97) {
        try {
            const uint64_t b = place_interpreter(ImageBytes(std::span(so.data(), n)), lo, hi);
            EXPECT_GE(b, lo);
            EXPECT_LE(inspect_linux_elf_at(ImageBytes(std::span(so.data(), n)), b, hi).end, hi);
        } catch (const ImageError&) {
        }
    }
}

TEST(LinuxInterp, FdImageReadsARegularFileOnly) {
    EXPECT_THROW(FdImage(UniqueFd(::open("/dev/null", O_RDONLY)), "null"), ImageError);
    EXPECT_THROW(FdImage(UniqueFd(::open("/", O_RDONLY | O_DIRECTORY)), "dir"), ImageError);
    EXPECT_THROW(FdImage(UniqueFd(), "none"), ImageError);
    char tmpl[] = "/tmp/kvmgpu-fdimage-XXXXXX";
    const int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    ::unlink(tmpl);
    ASSERT_EQ(::write(fd, "0123456789", 10), 10);
    const FdImage img(UniqueFd(fd), "tmp");
    EXPECT_EQ(img.size(), 10u);
    char buf[4] = {};
    img.read(6, buf, 4);
    EXPECT_EQ(std::string(buf, 4), "6789");
    EXPECT_THROW(img.read(8, buf, 4), ImageError);
    EXPECT_THROW(img.read(~0ull, buf, 2), ImageError);
}

} // namespace
} // namespace kvmgpu::linux_abi
