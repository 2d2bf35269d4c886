// The FPU state in a signal frame of a guest with XSAVE: pushed as Linux
// writes it (the XSAVE area, struct _fpx_sw_bytes, FP_XSTATE_MAGIC2,
// UC_FP_XSTATE) and read back as Linux reads it: a round trip gives the
// state again; each of Linux's checks, broken on its own, gives the legacy
// fallback or the refusal (SIGSEGV) Linux gives; what reaches KVM is
// rebuilt from validated fields only.
#include <gtest/gtest.h>

#include <cstring>

#include "kvmtool-gpu/vmm/linux/guest_signals.h"
#include "kvmtool-gpu/vmm/linux/signal_fpstate.h"
#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

constexpr uint32_t kMask = 0xffbf;

// AVX-512's layout (Intel's offsets).
GuestXstate avx512() {
    GuestXstate xs;
    xs.xcr0 = 0xe7;
    xs.size = 2688;
    const uint32_t off[8] = {0, 0, 576, 0, 0, 1088, 1152, 1664}, len[8] = {0, 0, 256, 0, 0, 64, 512, 1024};
    std::memcpy(xs.offset, off, sizeof off);
    std::memcpy(xs.bytes, len, sizeof len);
    return xs;
}

// An area as KVM_GET_XSAVE gives it: every byte of the registers set, XSTATE_BV
// naming AVX, opmask and PKRU (which KVM may report beyond the guest's XCR0).
std::vector<uint8_t> kvm_area(const GuestXstate& xs) {
    std::vector<uint8_t> a(kKvmXsaveBytes, 0);
    for (uint32_t i = 32; i < 416; ++i) a[i] = static_cast<uint8_t>(i); // ST0-7, XMM0-15
    const uint16_t fcw = 0x27f;
    const uint32_t mxcsr = 0x1fa0;
    std::memcpy(a.data(), &fcw, 2);
    std::memcpy(a.data() + 24, &mxcsr, 4);
    for (uint32_t i = 0; i < 256; ++i) a[xs.offset[2] + i] = static_cast<uint8_t>(0xa0 ^ i); // YMM_Hi128
    for (uint32_t i = 0; i < 64; ++i) a[xs.offset[5] + i] = static_cast<uint8_t>(0x50 + i);  // k0-k7
    const uint64_t xstate_bv = 0x7 | (1u << 5) | (1u << 9);
    std::memcpy(a.data() + 512, &xstate_bv, 8);
    return a;
}

template <class T>
T get(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

struct Fpstate : Server {
    GuestXstate xs = avx512();
    uint64_t area = kBuf + 8192; // 64-byte aligned

    // A frame's fpstate as push writes it, at `at`.
    void write_frame() {
        const std::vector<uint8_t> f = frame_fpstate(kvm_area(xs), xs);
        std::memcpy(at_host(area), f.data(), f.size());
    }
    uint8_t* at_host(uint64_t gva) { return Server::at(gva); }
    std::variant<std::vector<uint8_t>, std::string> back(uint64_t where) {
        return fpstate_from_frame(server->user_memory(), where, xs, kMask);
    }
    std::vector<uint8_t> loaded(uint64_t where) {
        auto r = back(where);
        if (auto* why = std::get_if<std::string>(&r)) {
            ADD_FAILURE() << "refused: " << *why;
            return {};
        }
        return std::get<std::vector<uint8_t>>(r);
    }
    bool refused(uint64_t where) { return std::holds_alternative<std::string>(back(where)); }
    template <class T>
    void poke(uint64_t off, T v) { std::memcpy(at_host(area + off), &v, sizeof v); }
};

TEST_F(Fpstate, TheFrameHoldsTheXsaveAreaAsLinuxWritesIt) {
    make(false);
    const std::vector<uint8_t> f = frame_fpstate(kvm_area(xs), xs);
    ASSERT_EQ(f.size(), 2688u + 4);
    EXPECT_EQ(get<uint32_t>(&f[464]), kFpXstateMagic1);
    EXPECT_EQ(get<uint32_t>(&f[468]), 2688u + 4) << "extended_size";
    EXPECT_EQ(get<uint64_t>(&f[472]), 0xe7u) << "xfeatures: XCR0";
    EXPECT_EQ(get<uint32_t>(&f[480]), 2688u) << "xstate_size";
    EXPECT_EQ(get<uint64_t>(&f[512]), 0x7u | (1u << 5)) << "XSTATE_BV within XCR0, x87 and SSE marked";
    EXPECT_EQ(get<uint32_t>(&f[2688]), kFpXstateMagic2);
    EXPECT_EQ(f[576], 0xa0) << "YMM_Hi128";
    // Without XSAVE: the FXSAVE image alone, its software bytes clear.
    std::vector<uint8_t> fx(512, 0x11);
    const std::vector<uint8_t> legacy = frame_fpstate(fx, GuestXstate{});
    ASSERT_EQ(legacy.size(), 512u);
    EXPECT_EQ(legacy[463], 0x11);
    EXPECT_EQ(get<uint32_t>(&legacy[464]), 0u);
}

TEST_F(Fpstate, APushedFrameReadBackGivesTheStateAgain) {
    make(false);
    FrameIn in;
    in.regs.rsp = 31 * kMiB - 1000;
    in.regs.rip = 0x400123;
    in.xstate = xs;
    in.fpu = kvm_area(xs);
    SignalInfo info;
    info.signo = 10;
    auto pushed = push_signal_frame(server->user_memory(), SigAction{0x402000, kSaSiginfo | kSaRestorer, 0x401000, 0},
                                    info, in);
    ASSERT_TRUE(std::holds_alternative<Delivered>(pushed)) << std::get<std::string>(pushed);
    const Delivered d = std::get<Delivered>(pushed);
    const uint64_t uc = d.frame + 8;
    EXPECT_EQ(get<uint64_t>(at(uc)) & kUcFpXstate, kUcFpXstate) << "uc_flags: UC_FP_XSTATE";
    const uint64_t fp = get<uint64_t>(at(uc + 40 + 23 * 8));
    EXPECT_EQ(fp % 64, 0u) << "XRSTOR's alignment";
    EXPECT_LE(fp + 2688 + 4, in.regs.rsp - 128) << "below the red zone";
    EXPECT_GE(fp, d.frame + 440);
    EXPECT_EQ(get<uint32_t>(at(fp + 2688)), kFpXstateMagic2);

    auto popped = pop_signal_frame(server->user_memory(), uc, kvm_regs{}, xs, kMask);
    ASSERT_TRUE(std::holds_alternative<Restored>(popped));
    const Restored r = std::get<Restored>(popped);
    ASSERT_TRUE(r.fpu_refused.empty()) << r.fpu_refused;
    ASSERT_EQ(r.fpu.size(), kKvmXsaveBytes);
    const std::vector<uint8_t> want = kvm_area(xs);
    EXPECT_EQ(std::memcmp(r.fpu.data(), want.data(), 28), 0) << "x87 control and MXCSR";
    EXPECT_EQ(std::memcmp(r.fpu.data() + 32, want.data() + 32, 416 - 32), 0) << "ST0-7, XMM0-15";
    EXPECT_EQ(std::memcmp(r.fpu.data() + 576, want.data() + 576, 256), 0) << "YMM upper halves";
    EXPECT_EQ(std::memcmp(r.fpu.data() + 1088, want.data() + 1088, 64), 0) << "opmask";
    EXPECT_EQ(get<uint64_t>(&r.fpu[512]), 0x7u | (1u << 5)) << "XSTATE_BV: what the frame named, within XCR0";
    for (uint32_t i = 464; i < 512; ++i) ASSERT_EQ(r.fpu[i], 0) << "software bytes are not KVM's: " << i;
    for (uint32_t i = 520; i < 576; ++i) ASSERT_EQ(r.fpu[i], 0) << "header " << i;
}

TEST_F(Fpstate, SoftwareBytesThatDoNotHoldTogetherGiveTheLegacyImageOnly) {
    make(false);
    const auto legacy_only = [&](const char* what) {
        const std::vector<uint8_t> a = loaded(area);
        ASSERT_EQ(a.size(), kKvmXsaveBytes) << what;
        EXPECT_EQ(get<uint64_t>(&a[512]), 0x3u) << what << ": x87 and SSE only";
        EXPECT_EQ(a[160], 160) << what << ": XMM0 from the frame";
        EXPECT_EQ(a[576], 0) << what << ": YMM upper halves initial";
        EXPECT_EQ(a[1088], 0) << what << ": opmask initial";
        EXPECT_EQ(get<uint16_t>(&a[0]), 0x27f) << what << ": FCW from the frame";
        EXPECT_EQ(get<uint32_t>(&a[24]), 0x1fa0u) << what << ": MXCSR from the frame (FXRSTOR loads it)";
    };
    write_frame();
    poke<uint32_t>(464, 0x12345678);
    legacy_only("magic1");
    write_frame();
    poke<uint32_t>(480, 575);
    legacy_only("xstate_size below the legacy region and header");
    write_frame();
    poke<uint32_t>(480, 2688 + 64);
    legacy_only("xstate_size beyond XCR0's area");
    write_frame();
    poke<uint32_t>(468, 2000);
    legacy_only("extended_size below xstate_size");
    write_frame();
    poke<uint32_t>(2688, 0);
    legacy_only("magic2");
    // A legacy frame needs FXRSTOR's 16-byte alignment only.
    write_frame();
    poke<uint32_t>(464, 0);
    std::vector<uint8_t> copy(at_host(area), at_host(area) + 512);
    std::memcpy(at_host(area + 16 + 4096), copy.data(), 512);
    EXPECT_FALSE(refused(area + 16 + 4096));
    std::memcpy(at_host(area + 8 + 4096), copy.data(), 512);
    EXPECT_TRUE(refused(area + 8 + 4096));
}

TEST_F(Fpstate, WhatXrstorFaultsOnIsRefusedEachOnItsOwn) {
    make(false);
    write_frame();
    EXPECT_FALSE(refused(area)) << "the frame as written";
    poke<uint64_t>(512, 0x7 | (1ull << 9));
    EXPECT_TRUE(refused(area)) << "XSTATE_BV names PKRU, which XCR0 lacks";
    write_frame();
    poke<uint64_t>(512, 0x7 | (1ull << 62));
    EXPECT_TRUE(refused(area)) << "XSTATE_BV names a reserved component";
    write_frame();
    poke<uint64_t>(520, (1ull << 63) | 0xe7);
    EXPECT_TRUE(refused(area)) << "XCOMP_BV: the compacted form";
    write_frame();
    poke<uint64_t>(528, 1);
    EXPECT_TRUE(refused(area)) << "header bytes 16..23";
    // The area not 64-byte aligned (a copy 32 bytes further on).
    write_frame();
    std::vector<uint8_t> f(at_host(area), at_host(area) + 2692);
    std::memcpy(at_host(area + 4096 + 32), f.data(), f.size());
    EXPECT_TRUE(refused(area + 4096 + 32)) << "32-byte aligned";
    // Memory that is not the guest's: the area, or the magic2 word past it.
    EXPECT_TRUE(refused(kGuard - 256)) << "legacy region in the guard";
    std::memcpy(at_host(kGuard - 1024), f.data(), 512); // valid software bytes, magic2 would lie in the guard
    EXPECT_TRUE(refused(kGuard - 1024)) << "magic2 in the guard";
    EXPECT_TRUE(refused(~0ull - 4095));
}

TEST_F(Fpstate, ChecksLinuxDoesNotMakeAndWhatIsLimited) {
    make(false);
    // Header bytes 24..63: XRSTOR's standard form ignores them; KVM would refuse them, so they go as zeros.
    write_frame();
    poke<uint64_t>(536, ~0ull);
    poke<uint64_t>(568, ~0ull);
    std::vector<uint8_t> a = loaded(area);
    for (uint32_t i = 520; i < 576; ++i) ASSERT_EQ(a[i], 0) << i;
    // MXCSR's reserved bits: limited to the CPU's.
    write_frame();
    poke<uint32_t>(24, 0xffffffff);
    a = loaded(area);
    EXPECT_EQ(get<uint32_t>(&a[24]), kMask);
    // A component left out of XSTATE_BV: its initial state; MXCSR from the frame.
    write_frame();
    poke<uint64_t>(512, 0x3);
    a = loaded(area);
    EXPECT_EQ(get<uint64_t>(&a[512]), 0x3u);
    EXPECT_EQ(a[576], 0);
    EXPECT_EQ(get<uint32_t>(&a[24]), 0x1fa0u);
    // A component left out of the software bytes' xfeatures: initial too, as Linux resets it;
    // MXCSR still the frame's (SSE requested).
    write_frame();
    poke<uint64_t>(472, 0x3);
    a = loaded(area);
    EXPECT_EQ(a[576], 0);
    EXPECT_EQ(get<uint64_t>(&a[512]), 0x3u);
    EXPECT_EQ(get<uint32_t>(&a[24]), 0x1fa0u);
    // Neither SSE nor AVX requested: XRSTOR leaves MXCSR alone, Linux's reset makes it the default;
    // x87 alone from the frame, the XMM registers initial.
    write_frame();
    poke<uint64_t>(472, 0x1);
    a = loaded(area);
    EXPECT_EQ(get<uint32_t>(&a[24]), 0x1f80u);
    EXPECT_EQ(get<uint16_t>(&a[0]), 0x27f);
    EXPECT_EQ(a[160], 0);
    // No fpstate: the initial state.
    a = loaded(0);
    EXPECT_EQ(get<uint16_t>(&a[0]), 0x37f);
    EXPECT_EQ(get<uint32_t>(&a[24]), 0x1f80u);
    EXPECT_EQ(get<uint64_t>(&a[512]), 0x3u);
}

TEST_F(Fpstate, WithoutXsaveTheFxsaveImageComesBack) {
    make(false);
    xs = GuestXstate{};
    std::vector<uint8_t> fx(512, 0);
    fx[160] = 0x42;
    const uint32_t mxcsr = 0xffffffff;
    std::memcpy(fx.data() + 24, &mxcsr, 4);
    std::memcpy(at_host(area + 16), fx.data(), fx.size());
    const std::vector<uint8_t> got = loaded(area + 16);
    ASSERT_EQ(got.size(), 512u);
    EXPECT_EQ(got[160], 0x42);
    EXPECT_EQ(get<uint32_t>(&got[24]), kMask);
    EXPECT_TRUE(refused(area + 8)) << "FXRSTOR's alignment";
}

// AT_MINSIGSTKSZ as Linux computes it, and a sigaltstack of that size holds a frame wherever it starts.
TEST_F(Fpstate, AMinimumSignalStackHoldsAFrame) {
    make(false);
    EXPECT_EQ(min_signal_stack(GuestXstate{}), 1152u);
    EXPECT_EQ(min_signal_stack(xs), 3328u);
    for (const GuestXstate& g : {GuestXstate{}, xs}) {
        for (uint64_t skew = 0; skew < 64; skew += 8) {
            FrameIn in;
            in.regs.rsp = 31 * kMiB - 1000;
            in.xstate = g;
            in.fpu = g.enabled() ? kvm_area(g) : std::vector<uint8_t>(512, 0);
            in.alt = AltStack{kBuf + 65536 + skew, min_signal_stack(g), 0};
            SignalInfo info;
            info.signo = 10;
            auto pushed = push_signal_frame(server->user_memory(),
                                            SigAction{0x402000, kSaSiginfo | kSaRestorer | kSaOnstack, 0x401000, 0},
                                            info, in);
            ASSERT_TRUE(std::holds_alternative<Delivered>(pushed)) << std::get<std::string>(pushed) << " " << skew;
            EXPECT_TRUE(std::get<Delivered>(pushed).on_altstack);
        }
    }
}

} // namespace
} // namespace kvmgpu::linux_abi
