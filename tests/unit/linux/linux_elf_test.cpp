// Static Linux executables: told apart from project images, every header
// field checked, segments loaded at their virtual addresses (a static-pie
// at KVMGPU_LINUX_PIE_BASE), AT_PHDR found.
#include <elf.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/vmm/linux/linux_elf.h"
#include "memmap/backing.h"
#include "tests/support/tiny_elf.h"

namespace kvmgpu::linux_abi {
namespace {

constexpr uint64_t kLimit = 32ull << 20;

// An ELF laid out as ld lays out a static executable: the first PT_LOAD
// starts at file offset 0 (so it holds the headers), code after them,
// then a data segment with .bss, a PT_TLS and a PT_GNU_STACK.
struct LinuxElf {
    Elf64_Ehdr eh{};
    std::vector<Elf64_Phdr> ph;
    std::vector<uint8_t> body = std::vector<uint8_t>(0x2000, 0x90);

    explicit LinuxElf(bool pie = false) {
        std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
        eh.e_ident[EI_CLASS] = ELFCLASS64;
        eh.e_ident[EI_DATA] = ELFDATA2LSB;
        eh.e_ident[EI_VERSION] = EV_CURRENT;
        eh.e_type = pie ? ET_DYN : ET_EXEC;
        eh.e_machine = EM_X86_64;
        eh.e_version = EV_CURRENT;
        eh.e_phoff = sizeof(Elf64_Ehdr);
        eh.e_phentsize = sizeof(Elf64_Phdr);
        const uint64_t base = pie ? 0 : 0x400000;
        eh.e_entry = base + 0x1000;
        ph.push_back(seg(PT_LOAD, PF_R | PF_X, 0, base, 0x1800, 0x1800));
        ph.push_back(seg(PT_LOAD, PF_R | PF_W, 0x1800, base + 0x2800, 0x800, 0x3000));
        ph.push_back(seg(PT_TLS, PF_R, 0x1800, base + 0x2800, 0x10, 0x20));
        ph.push_back(seg(PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0));
        if (pie) ph.push_back(seg(PT_DYNAMIC, PF_R | PF_W, 0x1900, base + 0x2900, 0x100, 0x100));
    }
    static Elf64_Phdr seg(uint32_t type, uint32_t flags, uint64_t off, uint64_t vaddr, uint64_t filesz, uint64_t memsz) {
        Elf64_Phdr p{};
        p.p_type = type, p.p_flags = flags, p.p_offset = off, p.p_vaddr = p.p_paddr = vaddr;
        p.p_filesz = filesz, p.p_memsz = memsz, p.p_align = type == PT_LOAD ? 0x1000 : 8;
        return p;
    }
    std::vector<uint8_t> bytes() {
        eh.e_phnum = static_cast<uint16_t>(ph.size());
        std::vector<uint8_t> out = body;
        std::memcpy(out.data(), &eh, sizeof eh);
        std::memcpy(out.data() + sizeof eh, ph.data(), ph.size() * sizeof(Elf64_Phdr));
        out[0x1000] = 0xCC; // the entry's first byte, checked after loading
        out[0x1800] = 0x5A; // the data segment's first byte
        return out;
    }
};

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

TEST(LinuxElf, DynamicExecutablesAreRefusedWithTheAdvice) {
    LinuxElf e;
    e.ph.push_back(LinuxElf::seg(PT_INTERP, PF_R, 0x200, 0x400200, 0x1c, 0x1c));
    try {
        classify(e.bytes());
        FAIL() << "a PT_INTERP was accepted";
    } catch (const ImageError& err) {
        EXPECT_NE(std::string(err.what()).find("dynamic executable: build with -static"), std::string::npos);
    }
    EXPECT_NE(refusal(e.bytes()).find("dynamic executable: build with -static"), std::string::npos);
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

} // namespace
} // namespace kvmgpu::linux_abi
