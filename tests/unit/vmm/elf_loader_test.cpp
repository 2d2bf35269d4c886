#include "kvmtool-gpu/vmm/elf_loader.h"

#include <gtest/gtest.h>

#include <elf.h>
#include <unistd.h>

#include <cstdio>

#include "tests/support/tiny_elf.h"

namespace kvmgpu {
namespace {

using test::tiny_elf;
constexpr uint64_t kRam = 16ull << 20;

memmap::GuestMemory make_ram() {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
    return mem;
}

template <typename T>
void poke(std::vector<uint8_t>& img, size_t off, T v) { std::memcpy(img.data() + off, &v, sizeof v); }

void expect_refused(const std::vector<uint8_t>& img, const std::string& fragment) {
    try {
        inspect_elf(img, kRam);
        FAIL() << "accepted an image that should be refused (" << fragment << ")";
    } catch (const ImageError& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
    }
}

TEST(ElfLoader, LoadsSegmentAndZeroFillsBss) {
    auto mem = make_ram();
    const std::vector<uint8_t> code = {0x90, 0x90, 0xF4};
    auto r = load_elf(tiny_elf(code, 0x200000, 0x3000), mem);
    EXPECT_EQ(r.entry, 0x200000u);
    EXPECT_EQ(r.lowest, 0x200000u);
    EXPECT_EQ(r.end, 0x203000u);
    uint8_t got[4] = {1, 1, 1, 1};
    ASSERT_TRUE(mem.read(memmap::GuestPhysAddr{0x200000}, got, 4));
    EXPECT_EQ(got[2], 0xF4);
    EXPECT_EQ(got[3], 0); // first byte of the zero-filled tail
}

TEST(ElfLoader, RefusesMalformedImages) {
    const auto good = tiny_elf({0xF4});
    expect_refused(std::vector<uint8_t>(good.begin(), good.begin() + 20), "truncated");
    auto bad = good;
    bad[0] = 0;
    expect_refused(bad, "not an ELF");
    bad = good;
    bad[EI_CLASS] = ELFCLASS32;
    expect_refused(bad, "64-bit");
    bad = good;
    poke<uint16_t>(bad, offsetof(Elf64_Ehdr, e_machine), EM_AARCH64);
    expect_refused(bad, "x86-64");
    bad = good;
    poke<uint16_t>(bad, offsetof(Elf64_Ehdr, e_phnum), 1000);
    expect_refused(bad, "program header count");
    bad = good;
    poke<uint64_t>(bad, offsetof(Elf64_Ehdr, e_phoff), ~0ull - 8);
    expect_refused(bad, "past the end");
}

TEST(ElfLoader, RefusesSegmentsOutsideRamOrWrapping) {
    expect_refused(tiny_elf({0xF4}, 0x1000), "below the image base");
    expect_refused(tiny_elf({0xF4}, kRam - 1, 2), "beyond guest RAM");
    auto img = tiny_elf({0xF4});
    poke<uint64_t>(img, test::kPhdrOffset + offsetof(Elf64_Phdr, p_memsz), ~0ull);
    expect_refused(img, "wraps");
    img = tiny_elf({0xF4});
    poke<uint64_t>(img, test::kPhdrOffset + offsetof(Elf64_Phdr, p_filesz), 4096);
    expect_refused(img, "file size exceeds");
    img = tiny_elf({0xF4});
    poke<uint64_t>(img, test::kPhdrOffset + offsetof(Elf64_Phdr, p_offset), 1 << 20);
    expect_refused(img, "past the end");
    img = tiny_elf({0xF4});
    poke<uint64_t>(img, offsetof(Elf64_Ehdr, e_entry), 0x900000);
    expect_refused(img, "entry point");
}

TEST(ElfLoader, RefusesOverlappingSegments) {
    // Two copies of the same PT_LOAD: they overlap exactly.
    auto img = tiny_elf({0xF4});
    Elf64_Phdr ph;
    std::memcpy(&ph, img.data() + test::kPhdrOffset, sizeof ph);
    std::vector<uint8_t> two(img.begin(), img.begin() + test::kPhdrOffset);
    two.insert(two.end(), reinterpret_cast<uint8_t*>(&ph), reinterpret_cast<uint8_t*>(&ph) + sizeof ph);
    ph.p_offset += sizeof ph;
    two.insert(two.end(), reinterpret_cast<uint8_t*>(&ph), reinterpret_cast<uint8_t*>(&ph) + sizeof ph);
    two.push_back(0xF4);
    poke<uint16_t>(two, offsetof(Elf64_Ehdr, e_phnum), 2);
    Elf64_Phdr first;
    std::memcpy(&first, two.data() + test::kPhdrOffset, sizeof first);
    first.p_offset = two.size() - 1;
    std::memcpy(two.data() + test::kPhdrOffset, &first, sizeof first);
    expect_refused(two, "overlap");
}

TEST(ElfLoader, MissingFileIsOneLine) {
    try {
        ImageFile f("/nonexistent/guest.elf");
        FAIL();
    } catch (const ImageError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/guest.elf"), std::string::npos);
    }
    EXPECT_THROW(ImageFile("/tmp"), ImageError); // a directory
}

// Counts what the loader reads from the image.
struct CountingSource : ImageSource {
    const ImageSource& inner;
    mutable uint64_t bytes_read = 0;
    explicit CountingSource(const ImageSource& s) : inner(s) {}
    uint64_t size() const override { return inner.size(); }
    void read(uint64_t off, void* dst, uint64_t len) const override {
        bytes_read += len;
        inner.read(off, dst, len);
    }
};

// A 2 GiB file that is not an ELF was read whole (6.3 s, 2.1 GB) before
// "not an ELF file". Now the header is read first, and only the header.
TEST(ElfLoader, HugeNonElfFileIsRefusedAfterReadingItsHeader) {
    char path[] = "/tmp/kvmgpu-huge-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 2ll << 30), 0); // sparse: no disk, no time
    close(fd);
    {
        const ImageFile file(path);
        EXPECT_EQ(file.size(), 2ull << 30);
        const CountingSource counted(file);
        try {
            inspect_elf(counted, 512ull << 20);
            ADD_FAILURE() << "a zero-filled file passed as an ELF image";
        } catch (const ImageError& e) {
            EXPECT_NE(std::string(e.what()).find("not an ELF file"), std::string::npos) << e.what();
        }
        EXPECT_LE(counted.bytes_read, sizeof(Elf64_Ehdr));
    }
    std::remove(path);
}

TEST(ElfLoader, FileSegmentsAreReadStraightIntoRam) {
    const std::vector<uint8_t> code = {0x90, 0x90, 0xF4};
    const auto bytes = test::tiny_elf(code, 0x200000, 0x3000);
    const std::string path = test::write_temp_image(bytes, "pread");
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 4ull << 20));
    const ImageFile file(path);
    const CountingSource counted(file);
    const auto r = load_elf(counted, mem);
    EXPECT_EQ(r.entry, 0x200000u);
    EXPECT_EQ(counted.bytes_read, sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + code.size());
    EXPECT_EQ(*mem.read_obj<uint8_t>(memmap::GuestPhysAddr{0x200002}), 0xF4);
    std::remove(path.c_str());
    const std::string empty = test::write_temp_image({}, "empty");
    EXPECT_THROW(ImageFile{empty}, ImageError);
    std::remove(empty.c_str());
}

} // namespace
} // namespace kvmgpu
