#include "kvmtool-gpu/vmm/linux/signal_fpstate.h"

#include <cstring>

namespace kvmgpu::linux_abi {

namespace {
// The legacy region: MXCSR, MXCSR_MASK, the x87 and XMM registers, the software bytes.
constexpr uint32_t kMxcsr = 24, kMxcsrMask = 28, kSt = 32, kXmm = 160, kSwBytes = 464;
constexpr uint32_t kMagic2Bytes = 4;
constexpr uint32_t kDefaultMxcsr = 0x1f80;
constexpr uint16_t kDefaultFcw = 0x37f;

// struct _fpx_sw_bytes, at kSwBytes.
struct SwBytes {
    uint32_t magic1, extended_size;
    uint64_t xfeatures;
    uint32_t xstate_size, padding[7];
};
static_assert(sizeof(SwBytes) == kFxBytes - kSwBytes);

template <class T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T>
void store(uint8_t* p, const T& v) { std::memcpy(p, &v, sizeof v); }

std::vector<uint8_t> initial_fx() {
    std::vector<uint8_t> fx(kFxBytes, 0);
    store(fx.data(), kDefaultFcw);
    store(fx.data() + kMxcsr, kDefaultMxcsr);
    return fx;
}

std::vector<uint8_t> initial_area() {
    const KvmXsaveArea x = initial_xsave();
    const auto* b = reinterpret_cast<const uint8_t*>(x.region);
    return {b, b + kKvmXsaveBytes};
}

// What XRSTOR with requested-feature bitmap `xrestore` (then Linux's
// reset of XCR0's other components) leaves: the x87, SSE and MXCSR parts
// from `legacy` where requested and present (`present`: XSTATE_BV), the
// initial values elsewhere; the extended components named in `present`
// and `xrestore` from `area` (read from the guest at their offsets by the
// caller), the rest initial.
std::vector<uint8_t> rebuild(const uint8_t* legacy, uint64_t present, uint64_t xrestore, uint32_t mxcsr_mask) {
    std::vector<uint8_t> out = initial_area();
    uint8_t* b = out.data();
    const uint64_t loaded = present & xrestore;
    if (loaded & kXfeatureFp) {
        std::memcpy(b, legacy, kMxcsr);                          // FCW, FSW, FTW, FOP, FIP, FDP
        std::memcpy(b + kSt, legacy + kSt, kXmm - kSt);          // ST0-7
    }
    if (loaded & kXfeatureSse) std::memcpy(b + kXmm, legacy + kXmm, 16 * 16); // XMM0-15
    // MXCSR: XRSTOR loads it whenever SSE or AVX is requested, whatever
    // XSTATE_BV says, and FXRSTOR always; Linux's reset of the components
    // not requested leaves it (measured on Linux 6.1: a legacy-only frame,
    // or one without AVX in its xfeatures, gives the frame's MXCSR back).
    const uint32_t mxcsr = (xrestore & (kXfeatureSse | kXfeatureYmm)) ? load<uint32_t>(legacy + kMxcsr) & mxcsr_mask
                                                                       : kDefaultMxcsr;
    store(b + kMxcsr, mxcsr);
    store(b + kMxcsrMask, mxcsr_mask);
    // x87 and SSE are written out in full (initial values where not loaded).
    store<uint64_t>(b + kFxBytes, kXfeatureFp | kXfeatureSse | (loaded & ~(kXfeatureFp | kXfeatureSse)));
    return out;
}
} // namespace

std::vector<uint8_t> fx_from_kvm(const kvm_fpu& f) {
    std::vector<uint8_t> fx(kFxBytes, 0);
    uint8_t* b = fx.data();
    store(b + 0, f.fcw);
    store(b + 2, f.fsw);
    b[4] = f.ftwx;
    store(b + 6, f.last_opcode);
    store(b + 8, f.last_ip);
    store(b + 16, f.last_dp);
    store(b + kMxcsr, f.mxcsr);
    store<uint32_t>(b + kMxcsrMask, 0xffff); // MXCSR_MASK as the frame reports it
    for (int i = 0; i < 8; ++i) std::memcpy(b + kSt + 16 * i, f.fpr[i], 16);
    for (int i = 0; i < 16; ++i) std::memcpy(b + kXmm + 16 * i, f.xmm[i], 16);
    return fx; // 416..511 zero: no extended state follows (no FP_XSTATE_MAGIC1)
}

kvm_fpu kvm_from_fx(std::span<const uint8_t> fx, uint32_t mxcsr_mask) {
    kvm_fpu f{};
    if (fx.size() < kFxBytes) return f;
    const uint8_t* b = fx.data();
    f.fcw = load<uint16_t>(b + 0);
    f.fsw = load<uint16_t>(b + 2);
    f.ftwx = b[4];
    f.last_opcode = load<uint16_t>(b + 6);
    f.last_ip = load<uint64_t>(b + 8);
    f.last_dp = load<uint64_t>(b + 16);
    f.mxcsr = load<uint32_t>(b + kMxcsr) & mxcsr_mask; // a reserved bit set would make the state unloadable
    for (int i = 0; i < 8; ++i) std::memcpy(f.fpr[i], b + kSt + 16 * i, 16);
    for (int i = 0; i < 16; ++i) std::memcpy(f.xmm[i], b + kXmm + 16 * i, 16);
    return f;
}

std::vector<uint8_t> frame_fpstate(std::span<const uint8_t> saved, const GuestXstate& xs) {
    if (!xs.enabled() || saved.size() < xs.size) {
        std::vector<uint8_t> fx(saved.begin(), saved.begin() + std::min<size_t>(saved.size(), kFxBytes));
        fx.resize(kFxBytes, 0);
        std::memset(fx.data() + kSwBytes, 0, kFxBytes - kSwBytes);
        return fx;
    }
    std::vector<uint8_t> out(saved.begin(), saved.begin() + xs.size);
    out.resize(xs.size + kMagic2Bytes);
    uint8_t* b = out.data();
    SwBytes sw{};
    sw.magic1 = kFpXstateMagic1;
    sw.extended_size = xs.size + kMagic2Bytes;
    sw.xfeatures = xs.xcr0;
    sw.xstate_size = xs.size;
    store(b + kSwBytes, sw);
    // The header: XSTATE_BV within XCR0 (KVM may name more, such as PKRU),
    // x87 and SSE always marked as Linux marks them; the rest of it zero.
    const uint64_t xstate_bv = (load<uint64_t>(b + kFxBytes) & xs.xcr0) | kXfeatureFp | kXfeatureSse;
    std::memset(b + kFxBytes, 0, kXsaveHeaderBytes);
    store(b + kFxBytes, xstate_bv);
    store(b + xs.size, kFpXstateMagic2);
    return out;
}

std::variant<std::vector<uint8_t>, std::string> fpstate_from_frame(const UserMemory& mem, uint64_t at,
                                                                   const GuestXstate& xs, uint32_t mxcsr_mask) {
    if (at == 0) return xs.enabled() ? initial_area() : initial_fx();
    uint8_t legacy[kFxBytes];
    if (!mem.read(at, legacy, sizeof legacy)) return std::string("its FPU state is not the guest's memory");
    if (!xs.enabled()) {
        if (at % 16) return std::string("its FPU state is not 16-byte aligned (FXRSTOR faults)");
        std::vector<uint8_t> fx(legacy, legacy + kFxBytes);
        store(fx.data() + kMxcsr, load<uint32_t>(legacy + kMxcsr) & mxcsr_mask);
        return fx;
    }
    // The software bytes decide between the XSAVE area and the legacy image.
    const SwBytes sw = load<SwBytes>(legacy + kSwBytes);
    bool xsave = sw.magic1 == kFpXstateMagic1 && sw.xstate_size >= kFxBytes + kXsaveHeaderBytes &&
                 sw.xstate_size <= xs.size && sw.xstate_size <= sw.extended_size;
    if (xsave) {
        uint32_t magic2 = 0;
        if (!mem.read(at + sw.xstate_size, &magic2, sizeof magic2))
            return std::string("its FPU state's end (FP_XSTATE_MAGIC2) is not the guest's memory");
        xsave = magic2 == kFpXstateMagic2;
    }
    if (!xsave) { // FXRSTOR of the legacy image, every other component initial
        if (at % 16) return std::string("its FPU state is not 16-byte aligned (FXRSTOR faults)");
        return rebuild(legacy, kXfeatureFp | kXfeatureSse, kXfeatureFp | kXfeatureSse, mxcsr_mask);
    }
    if (at % 64) return std::string("its XSAVE area is not 64-byte aligned (XRSTOR faults)");
    uint8_t header[kXsaveHeaderBytes];
    if (!mem.read(at + kFxBytes, header, sizeof header)) return std::string("its XSAVE header is not the guest's memory");
    const uint64_t xstate_bv = load<uint64_t>(header);
    const uint64_t xcomp_bv = load<uint64_t>(header + 8);
    if (xstate_bv & ~xs.xcr0) return std::string("its XSAVE header names components XCR0 does not enable (XRSTOR faults)");
    if (xcomp_bv != 0 || load<uint64_t>(header + 16) != 0)
        return std::string("its XSAVE header's bytes 8..23 are not zero (compacted form or reserved: XRSTOR faults)");
    const uint64_t xrestore = sw.xfeatures & xs.xcr0;
    std::vector<uint8_t> out = rebuild(legacy, xstate_bv, xrestore, mxcsr_mask);
    for (uint32_t i = 2; i < 8; ++i) {
        if (!(xstate_bv & xrestore & (1ull << i))) continue;
        if (!mem.read(at + xs.offset[i], out.data() + xs.offset[i], xs.bytes[i]))
            return std::string("its XSAVE area is not the guest's memory");
    }
    return out;
}

} // namespace kvmgpu::linux_abi
