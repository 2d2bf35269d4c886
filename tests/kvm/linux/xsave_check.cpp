// The XSAVE state of a Linux-ABI guest, as a program sees it on Linux:
//   CPUID's OSXSAVE and XGETBV show AVX's state enabled (never AMX's tiles),
//   CPUID leaf 0xD describes XCR0, and a second thread has the same XCR0;
//   a SIGUSR1 handler that overwrites YMM0-15 returns to the interrupted
//   code's YMM values exactly, its frame holding the XSAVE area with
//   Linux's software bytes and magic words (UC_FP_XSTATE);
//   a handler that breaks FP_XSTATE_MAGIC1 gets the legacy state back only
//   (the XMM halves, the upper halves zero), as Linux's sigreturn gives;
//   one that names a component XCR0 lacks in XSTATE_BV gets SIGSEGV;
//   where XCR0 has AVX-512, ZMM0's upper half, ZMM16 and k1 survive a handler too.
// Built without -mavx: on a CPU whose CPUID shows no AVX, or no OSXSAVE, it
// prints "xsave: SKIP: <why>" (linux-guests.sh decides whether that may be).
// Also runs natively, where Linux gives the same results.
#include <cpuid.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "guest_check.h"

namespace {

constexpr uint32_t kMagic1 = 0x46505853, kMagic2 = 0x46505845;
constexpr uint64_t kUcFpXstate = 0x1;

uint64_t xgetbv0() {
    uint32_t lo, hi;
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return lo | (uint64_t)hi << 32;
}

enum Mode { kClobber, kBreakMagic1, kBreakXstateBv };
volatile int mode = kClobber;
bool avx512 = false; // XCR0 and CPUID have AVX-512: the handler clobbers ZMM0's upper half, ZMM16 and k1 too
uint32_t ymm_hi_offset = 0; // CPUID.(0DH,2):EBX
// What the SIGUSR1 handler found in its frame.
struct Seen {
    int ran;
    uint64_t uc_flags, fpstate, xfeatures, xstate_bv;
    uint32_t magic1, xstate_size, magic2;
    uint8_t ymm0_hi[16];
};
volatile Seen seen;
sigjmp_buf segv_jump;
volatile int segv_code = -1;

__attribute__((target("avx512f"))) void clobber_avx512() {
    asm volatile("vpternlogd $0xff, %%zmm0, %%zmm0, %%zmm0\n\t vmovdqa64 %%zmm0, %%zmm16\n\t kxnorw %%k1, %%k1, %%k1" ::
                     : "xmm0", "xmm16", "k1");
}

void on_usr1(int, siginfo_t*, void* uc_void) {
    auto* uc = static_cast<ucontext_t*>(uc_void);
    auto* fp = reinterpret_cast<uint8_t*>(uc->uc_mcontext.fpregs);
    Seen s{};
    s.ran = 1;
    s.uc_flags = uc->uc_flags;
    s.fpstate = reinterpret_cast<uint64_t>(fp);
    memcpy(&s.magic1, fp + 464, 4);
    memcpy(&s.xfeatures, fp + 472, 8);
    memcpy(&s.xstate_size, fp + 480, 4);
    memcpy(&s.xstate_bv, fp + 512, 8);
    if (s.magic1 == kMagic1 && s.xstate_size < 65536) memcpy(&s.magic2, fp + s.xstate_size, 4);
    if (ymm_hi_offset) memcpy(s.ymm0_hi, fp + ymm_hi_offset, 16);
    memcpy(const_cast<Seen*>(&seen), &s, sizeof s);
    // Every YMM register all ones: the interrupted code must not see it.
    asm volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\t"
                 "vmovdqa %%ymm0, %%ymm1\n\t vmovdqa %%ymm0, %%ymm2\n\t vmovdqa %%ymm0, %%ymm3\n\t"
                 "vmovdqa %%ymm0, %%ymm4\n\t vmovdqa %%ymm0, %%ymm5\n\t vmovdqa %%ymm0, %%ymm6\n\t"
                 "vmovdqa %%ymm0, %%ymm7\n\t vmovdqa %%ymm0, %%ymm8\n\t vmovdqa %%ymm0, %%ymm9\n\t"
                 "vmovdqa %%ymm0, %%ymm10\n\t vmovdqa %%ymm0, %%ymm11\n\t vmovdqa %%ymm0, %%ymm12\n\t"
                 "vmovdqa %%ymm0, %%ymm13\n\t vmovdqa %%ymm0, %%ymm14\n\t vmovdqa %%ymm0, %%ymm15" ::
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                       "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    if (avx512) clobber_avx512();
    if (mode == kBreakMagic1) memset(fp + 464, 0, 4);
    if (mode == kBreakXstateBv) {
        uint64_t bv;
        memcpy(&bv, fp + 512, 8);
        bv |= 1ull << 62; // reserved: in no XCR0
        memcpy(fp + 512, &bv, 8);
    }
}

void on_segv(int, siginfo_t* info, void*) {
    segv_code = info->si_code;
    siglongjmp(segv_jump, 1);
}

// YMM0-15 from `in`, then tgkill(SIGUSR1) to this thread (the handler runs
// at the call's return), then YMM0-15 into `out`.
void signal_between(const uint8_t* in, uint8_t* out) {
    const long pid = getpid(), tid = syscall(SYS_gettid);
    asm volatile("vmovdqu 0(%[in]), %%ymm0\n\t   vmovdqu 32(%[in]), %%ymm1\n\t  vmovdqu 64(%[in]), %%ymm2\n\t"
                 "vmovdqu 96(%[in]), %%ymm3\n\t  vmovdqu 128(%[in]), %%ymm4\n\t vmovdqu 160(%[in]), %%ymm5\n\t"
                 "vmovdqu 192(%[in]), %%ymm6\n\t vmovdqu 224(%[in]), %%ymm7\n\t vmovdqu 256(%[in]), %%ymm8\n\t"
                 "vmovdqu 288(%[in]), %%ymm9\n\t vmovdqu 320(%[in]), %%ymm10\n\t vmovdqu 352(%[in]), %%ymm11\n\t"
                 "vmovdqu 384(%[in]), %%ymm12\n\t vmovdqu 416(%[in]), %%ymm13\n\t vmovdqu 448(%[in]), %%ymm14\n\t"
                 "vmovdqu 480(%[in]), %%ymm15\n\t"
                 "mov %[nr], %%eax\n\t syscall\n\t"
                 "vmovdqu %%ymm0, 0(%[out])\n\t   vmovdqu %%ymm1, 32(%[out])\n\t  vmovdqu %%ymm2, 64(%[out])\n\t"
                 "vmovdqu %%ymm3, 96(%[out])\n\t  vmovdqu %%ymm4, 128(%[out])\n\t vmovdqu %%ymm5, 160(%[out])\n\t"
                 "vmovdqu %%ymm6, 192(%[out])\n\t vmovdqu %%ymm7, 224(%[out])\n\t vmovdqu %%ymm8, 256(%[out])\n\t"
                 "vmovdqu %%ymm9, 288(%[out])\n\t vmovdqu %%ymm10, 320(%[out])\n\t vmovdqu %%ymm11, 352(%[out])\n\t"
                 "vmovdqu %%ymm12, 384(%[out])\n\t vmovdqu %%ymm13, 416(%[out])\n\t vmovdqu %%ymm14, 448(%[out])\n\t"
                 "vmovdqu %%ymm15, 480(%[out])\n\t vzeroupper"
                 :
                 : [in] "r"(in), [out] "r"(out), [nr] "i"(SYS_tgkill), "D"(pid), "S"(tid), "d"(SIGUSR1)
                 : "rax", "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                   "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

// ZMM0, ZMM16 and k1 from `in` (136 bytes), tgkill(SIGUSR1) to this thread, then the same into `out`.
__attribute__((target("avx512f"))) void signal_between_avx512(const uint8_t* in, uint8_t* out) {
    const long pid = getpid(), tid = syscall(SYS_gettid);
    asm volatile("vmovdqu64 0(%[in]), %%zmm0\n\t vmovdqu64 64(%[in]), %%zmm16\n\t kmovw 128(%[in]), %%k1\n\t"
                 "mov %[nr], %%eax\n\t syscall\n\t"
                 "vmovdqu64 %%zmm0, 0(%[out])\n\t vmovdqu64 %%zmm16, 64(%[out])\n\t kmovw %%k1, 128(%[out])\n\t"
                 "vzeroupper"
                 :
                 : [in] "r"(in), [out] "r"(out), [nr] "i"(SYS_tgkill), "D"(pid), "S"(tid), "d"(SIGUSR1)
                 : "rax", "rcx", "r11", "memory", "xmm0", "xmm16", "k1");
}

void* thread_xcr0(void* out) {
    *static_cast<uint64_t*>(out) = xgetbv0();
    // An AVX instruction on this thread's vCPU (a #UD without XCR0's AVX bit).
    alignas(32) uint8_t buf[32];
    memset(buf, 0x5a, sizeof buf);
    asm volatile("vmovdqa %0, %%ymm3\n\t vmovdqa %%ymm3, %0\n\t vzeroupper" : "+m"(buf) : : "xmm3");
    return nullptr;
}

void install(int sig, void (*fn)(int, siginfo_t*, void*)) {
    struct sigaction sa {};
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(sig, &sa, nullptr) == 0, "sigaction %d", sig);
}

} // namespace

int main() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __get_cpuid(1, &a, &b, &c, &d);
    const bool osxsave = c >> 27 & 1, avx = c >> 28 & 1;
    if (!avx) return printf("xsave: SKIP: CPUID.1:ECX shows no AVX on this CPU\n"), 0;
    if (!osxsave) return printf("xsave: SKIP: CPUID.1:ECX shows AVX but no OSXSAVE (no XSAVE for this program)\n"), 0;
    const uint64_t xcr0 = xgetbv0();
    CHECK((xcr0 & 7) == 7, "XCR0 0x%llx has x87, SSE and AVX", (unsigned long long)xcr0);
    __cpuid_count(0xd, 0, a, b, c, d);
    const uint64_t cpuid_xcr0 = a | (uint64_t)d << 32;
    const uint32_t enabled_size = b;
    CHECK((xcr0 & ~cpuid_xcr0) == 0, "XCR0 0x%llx within CPUID.(0DH,0) 0x%llx", (unsigned long long)xcr0,
          (unsigned long long)cpuid_xcr0);
    for (uint32_t i = 2; i < 63; ++i) {
        if (!(xcr0 >> i & 1)) continue;
        __cpuid_count(0xd, i, a, b, c, d);
        CHECK(a && b + a <= enabled_size, "component %u (%u bytes at %u) inside CPUID.(0DH,0):EBX %u", i, a, b,
              enabled_size);
        if (i == 2) ymm_hi_offset = b;
    }
    const bool tiles = xcr0 & (3ull << 17);
    printf("xsave: XCR0 0x%llx (%s%s), XSAVE area %u bytes\n", (unsigned long long)xcr0,
           (xcr0 & 0xe0) == 0xe0 ? "AVX-512" : "AVX", tiles ? ", AMX tiles" : "", enabled_size);

    uint64_t other = 0;
    pthread_t t;
    CHECK(pthread_create(&t, nullptr, thread_xcr0, &other) == 0, "pthread_create");
    pthread_join(t, nullptr);
    CHECK(other == xcr0, "the second thread's XCR0 0x%llx", (unsigned long long)other);

    install(SIGUSR1, on_usr1);
    install(SIGSEGV, on_segv);
    alignas(32) uint8_t in[512], out[512];
    for (int i = 0; i < 512; ++i) in[i] = (uint8_t)(i * 7 + 1);

    // The handler's YMM values stay its own.
    mode = kClobber;
    memset(out, 0, sizeof out);
    signal_between(in, out);
    CHECK(seen.ran, "the SIGUSR1 handler ran");
    CHECK(memcmp(in, out, sizeof in) == 0, "YMM0-15 back exactly after the handler");
    CHECK(seen.uc_flags & kUcFpXstate, "uc_flags has UC_FP_XSTATE: 0x%llx", (unsigned long long)seen.uc_flags);
    CHECK(seen.fpstate % 64 == 0, "fpstate 64-byte aligned: 0x%llx", (unsigned long long)seen.fpstate);
    CHECK(seen.magic1 == kMagic1, "FP_XSTATE_MAGIC1: 0x%x", seen.magic1);
    CHECK(seen.magic2 == kMagic2, "FP_XSTATE_MAGIC2 after %u bytes: 0x%x", seen.xstate_size, seen.magic2);
    CHECK((seen.xfeatures & 7) == 7 && (seen.xfeatures & ~xcr0) == 0, "sw xfeatures 0x%llx",
          (unsigned long long)seen.xfeatures);
    CHECK(seen.xstate_size >= ymm_hi_offset + 256, "xstate_size %u holds the YMM upper halves", seen.xstate_size);
    CHECK((seen.xstate_bv & 7) == 7, "XSTATE_BV 0x%llx names x87, SSE and AVX", (unsigned long long)seen.xstate_bv);
    uint8_t ymm0_hi[16];
    memcpy(ymm0_hi, const_cast<uint8_t*>(seen.ymm0_hi), 16);
    CHECK(memcmp(ymm0_hi, in + 16, 16) == 0, "the frame holds YMM0's upper half");

    // AVX-512's components: ZMM_Hi256, Hi16_ZMM and the opmask registers.
    __cpuid_count(7, 0, a, b, c, d);
    avx512 = (xcr0 & 0xe0) == 0xe0 && (b >> 16 & 1);
    if (avx512) {
        alignas(64) uint8_t zin[136], zout[136];
        for (int i = 0; i < 136; ++i) zin[i] = (uint8_t)(i * 13 + 5);
        memset(zout, 0, sizeof zout);
        seen.ran = 0;
        signal_between_avx512(zin, zout);
        CHECK(seen.ran, "the SIGUSR1 handler ran (AVX-512)");
        CHECK(memcmp(zin, zout, 130) == 0, "ZMM0, ZMM16 and k1 back exactly after the handler");
    } else {
        printf("xsave: AVX-512 part skipped: %s\n", (xcr0 & 0xe0) == 0xe0 ? "CPUID has no AVX512F" : "XCR0 lacks AVX-512's state");
    }

    // Broken magic1: the legacy state only, as Linux restores it.
    mode = kBreakMagic1;
    seen.ran = 0;
    memset(out, 0xcc, sizeof out);
    signal_between(in, out);
    CHECK(seen.ran, "the SIGUSR1 handler ran (magic1)");
    bool legacy_only = true;
    for (int r = 0; r < 16; ++r) {
        uint8_t zero[16] = {};
        legacy_only &= memcmp(out + 32 * r, in + 32 * r, 16) == 0 && memcmp(out + 32 * r + 16, zero, 16) == 0;
    }
    CHECK(legacy_only, "after a broken FP_XSTATE_MAGIC1: XMM0-15 back, the upper halves zero");

    // XSTATE_BV naming a component XCR0 lacks: SIGSEGV at rt_sigreturn.
    mode = kBreakXstateBv;
    seen.ran = 0;
    if (sigsetjmp(segv_jump, 1) == 0) {
        signal_between(in, out);
        CHECK(false, "rt_sigreturn took an XSTATE_BV naming a component XCR0 lacks");
    }
    CHECK(seen.ran, "the SIGUSR1 handler ran (XSTATE_BV)");
    CHECK(segv_code == 0x80, "SIGSEGV with SI_KERNEL: code %d", segv_code);

    printf("xsave: %s\n", failures ? "FAILED" : "ok: AVX enabled, YMM state kept across handlers, frames checked");
    return failures ? 1 : 0;
}
