#include "tests/fuzz/linux_elf_fuzz_body.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <string>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/vmm/linux/linux_elf.h"
#include "kvmtool-gpu/vmm/linux/linux_interp.h"
#include "memmap/backing.h"

namespace kvmgpu::fuzz {

namespace {

using namespace kvmgpu::linux_abi;
constexpr uint64_t kMiB = 1ull << 20, kRam = 64 * kMiB, kLimit = 48 * kMiB;

[[noreturn]] void violation(const char* what, const std::string& detail = "") {
    std::fprintf(stderr, "linux_elf_fuzz: VIOLATION: %s %s\n", what, detail.c_str());
    __builtin_trap();
}

// The file's bytes; a read that does not lie wholly inside them is the loader's bug.
class CheckedImage final : public ImageSource {
public:
    explicit CheckedImage(std::span<const uint8_t> bytes) : bytes_(bytes) {}
    uint64_t size() const override { return bytes_.size(); }
    void read(uint64_t offset, void* dst, uint64_t len) const override {
        uint64_t end;
        if (__builtin_add_overflow(offset, len, &end) || end > bytes_.size()) violation("read outside the file");
        if (len) std::memcpy(dst, bytes_.data() + offset, len);
    }

private:
    std::span<const uint8_t> bytes_;
};

void check_refusal(const ImageError& e) {
    const std::string what = e.what();
    if (what.empty() || what.find('\n') != std::string::npos) violation("refusal is not one line", what);
}

void check_image(const LinuxImage& img, uint64_t limit) {
    if (img.end > limit || img.lowest > img.end) violation("image outside its limit");
    if (img.interp.size() >= kMaxInterpPath || img.interp.find('\0') != std::string::npos)
        violation("interpreter path unchecked");
}

// Runs `step`, allowing only ImageError out of it.
template <class F>
void guarded(F&& step) {
    try {
        step();
    } catch (const ImageError& e) {
        check_refusal(e);
    } catch (const std::exception& e) {
        violation("not an ImageError", e.what());
    }
}

} // namespace

void run_linux_elf_input(const uint8_t* data, size_t size) {
    const CheckedImage image({data, size});
    guarded([&] { classify_image(image); });
    guarded([&] { check_image(inspect_linux_elf(image, kLimit), kLimit); });
    // As an interpreter: placed below the stack, then loaded there.
    static memmap::GuestMemory* mem = [] {
        auto* m = new memmap::GuestMemory;
        m->add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
        return m;
    }();
    guarded([&] {
        const uint64_t base = place_interpreter(image, 16 * kMiB, kLimit);
        if (base % 4096 || base < 16 * kMiB) violation("interpreter placed outside its range");
        check_image(load_linux_elf_at(image, *mem, base, kLimit), kLimit);
    });
    guarded([&] { check_image(load_linux_elf(image, *mem, kLimit), kLimit); });
}

} // namespace kvmgpu::fuzz
