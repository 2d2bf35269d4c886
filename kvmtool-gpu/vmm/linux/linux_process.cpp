#include "kvmtool-gpu/vmm/linux/linux_process.h"

#include <elf.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include <cpuid.h>
#include <fcntl.h>
#include <x86intrin.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/kvm/kvm_error.h"
#include "kvmtool-gpu/util/log.h"
#include "kvmtool-gpu/vmm/guest_fault.h"
#include "kvmtool-gpu/vmm/linux/guest_signals.h"
#include "kvmtool-gpu/vmm/linux/linux_interp.h"
#include "kvmtool-gpu/vmm/linux/linux_stack.h"
#include "kvmtool-gpu/vmm/linux/signal_fpstate.h"
#include "kvmtool-gpu/vmm/linux/syscall_trace.h"
#include "kvmtool-gpu/vmm/linux/user_return.h"

extern "C" const uint8_t kvmgpu_vdso_image[];
extern "C" const uint64_t kvmgpu_vdso_image_size;

namespace kvmgpu::linux_abi {

namespace {
constexpr uint64_t k2M = 2ull << 20;

constexpr uint32_t kMsrTsc = 0x10;

// Guest TSC minus host TSC: 0 when the vCPU's TSC, read between two of the
// host's, falls between them (the same counter, as on kvm-pvm); else from
// the narrowest of a few brackets.
std::optional<int64_t> tsc_offset(const VcpuFd& vcpu) {
    std::optional<int64_t> best;
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 3; ++i) {
        const uint64_t before = __rdtsc();
        const std::optional<uint64_t> guest = vcpu.msr(kMsrTsc);
        const uint64_t after = __rdtsc();
        if (!guest) return std::nullopt;
        if (*guest >= before && *guest <= after) return 0;
        if (after - before < best_width) {
            best_width = after - before;
            best = static_cast<int64_t>(*guest - (before + (after - before) / 2));
        }
    }
    return best;
}

std::string base_name(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The MXCSR bits this CPU defines (FXSAVE's MXCSR_MASK; 0 there means the
// architectural default 0xffbf): a signal frame's MXCSR is limited to them.
uint32_t host_mxcsr_mask() {
    alignas(16) uint8_t area[512] = {};
    asm volatile("fxsave64 %0" : "=m"(area));
    uint32_t mask;
    std::memcpy(&mask, area + 28, 4);
    return mask ? mask : 0xffbf;
}
} // namespace

std::vector<std::pair<uint64_t, uint64_t>> linux_auxv(const LinuxImage& exe, uint64_t interp_base, uint64_t hwcap,
                                                      uint64_t min_sigstack) {
    return {{AT_PHDR, exe.phdr},     {AT_PHENT, sizeof(Elf64_Phdr)}, {AT_PHNUM, exe.phnum},
            {AT_PAGESZ, kPage},      {AT_BASE, interp_base},         {AT_FLAGS, 0},
            {AT_ENTRY, exe.entry},   {AT_UID, 0},                    {AT_EUID, 0},
            {AT_GID, 0},             {AT_EGID, 0},                   {AT_SECURE, 0},
            {AT_CLKTCK, 100},        {AT_HWCAP, hwcap},              {AT_HWCAP2, 0},
            {kAtMinSigStkSz, min_sigstack},
            {AT_KVMGPU_BOOT_INFO, KVMGPU_BOOT_INFO_GPA}};
}

std::string share_guest_path(const ShareSpec& share, bool with_root) {
    if (!share.guest_path.empty()) return share.guest_path;
    if (!with_root) return "/";
    return std::filesystem::absolute(share.dir).lexically_normal().string();
}

std::vector<MountSpec> guest_mounts(const LinuxGuestOptions& opts, const std::string& private_tmp) {
    std::vector<MountSpec> mounts;
    const bool with_root = !opts.root_dir.empty();
    if (with_root) mounts.push_back({"/", opts.root_dir, true, "--root"});
    for (const ShareSpec& s : opts.shares) mounts.push_back({share_guest_path(s, with_root), s.dir, s.read_only});
    if (!private_tmp.empty() && wants_private_tmp(opts))
        mounts.push_back({kPrivateTmpGuestPath, private_tmp, false, "the private temporary directory"});
    return mounts;
}

namespace {
// The host's current directory by the names a user knows it by: $PWD
// (symbolic links as the shell kept them) where it names it, then getcwd's.
std::vector<std::string> host_cwd_names() {
    std::vector<std::string> names;
    struct stat here {}, pwd {};
    const char* env = std::getenv("PWD");
    if (env && env[0] == '/' && ::stat(".", &here) == 0 && ::stat(env, &pwd) == 0 && here.st_dev == pwd.st_dev &&
        here.st_ino == pwd.st_ino)
        names.emplace_back(env);
    std::error_code ec;
    const auto physical = std::filesystem::current_path(ec);
    if (!ec) names.push_back(physical.string());
    return names;
}
} // namespace

std::string guest_start_cwd(const LinuxGuestOptions& opts) {
    const auto mounts = guest_mounts(opts); // the private /tmp is made later: its path is checked by name
    if (opts.cwd.empty()) {
        if (mounts.empty()) return "/";
        const GuestFs fs(mounts);
        for (const std::string& here : host_cwd_names())
            if (std::string seen = visible_at_same_path(fs, here); !seen.empty()) return seen;
        return "/";
    }
    const std::string what = "--cwd " + opts.cwd + ": ";
    if (!opts.cwd.starts_with('/')) throw std::invalid_argument(what + "not an absolute guest path");
    const std::string at = GuestFs::normalize(opts.cwd);
    if (at == "/" || (wants_private_tmp(opts) && at == kPrivateTmpGuestPath)) return at;
    if (mounts.empty()) throw std::invalid_argument(what + "the guest has no files (--root or --share)");
    struct stat st {};
    const int rc = GuestFs(mounts).stat(-1, at, true, &st);
    if (rc != 0) throw std::invalid_argument(what + std::strerror(-rc) + " in the guest's mounts");
    if (!S_ISDIR(st.st_mode)) throw std::invalid_argument(what + "not a directory in the guest's mounts");
    return at;
}

bool wants_private_tmp(const LinuxGuestOptions& opts) {
    if (opts.root_dir.empty()) return false;
    for (const ShareSpec& s : opts.shares)
        if (GuestFs::normalize(share_guest_path(s, true)) == "/tmp") return false;
    return true;
}

std::string guest_exe_path(const std::string& exe_path, const std::string& root_dir) {
    const std::string fallback = "/" + base_name(exe_path);
    if (root_dir.empty()) return fallback;
    namespace fs = std::filesystem;
    // As given (a shell's argv[0] keeps the symlink named: /usr/bin/python3),
    // else with every link resolved.
    auto inside = [](const fs::path& exe, const fs::path& root) -> std::string {
        const auto rel = exe.lexically_relative(root);
        if (rel.empty() || *rel.begin() == "..") return "";
        return GuestFs::normalize("/" + rel.string());
    };
    std::error_code ec;
    auto root_abs = fs::absolute(root_dir, ec).lexically_normal();
    if (ec) return fallback;
    if (!root_abs.has_filename() && root_abs != root_abs.root_path()) root_abs = root_abs.parent_path(); // "dir/"
    std::string at = inside(fs::absolute(exe_path, ec).lexically_normal(), root_abs);
    if (!at.empty()) return at;
    const auto exe = fs::canonical(exe_path, ec);
    const auto root = ec ? fs::path() : fs::canonical(root_dir, ec);
    if (!ec) at = inside(exe, root);
    return at.empty() ? fallback : at;
}

RamPlan plan_ram(uint64_t ram) {
    RamPlan p{};
    const uint64_t stack = ram >= (64ull << 20) ? (8ull << 20) : k2M;
    p.stack_top = ram;
    p.stack_lo = ram - stack;
    p.guard_lo = p.stack_lo - KVMGPU_LINUX_GUARD_BYTES;
    p.image_limit = p.guard_lo;
    return p;
}

LinuxProcess::LinuxProcess(const ImageSource& file, const memmap::GuestMemory& mem, const std::string& exe_path,
                           const LinuxGuestOptions& opts, BootParams boot, uint64_t hwcap,
                           std::function<void(std::string_view)> console_text)
    : mem_(mem), vdso_(opts.vdso), xstate_(opts.xstate), mxcsr_mask_(host_mxcsr_mask()) {
    const uint64_t ram = mem.total_bytes();
    const RamPlan plan = plan_ram(ram);
    image_ = load_linux_elf(file, mem, plan.image_limit);
    const uint64_t brk_start = (image_.end + kPage - 1) & ~(kPage - 1);
    if (brk_start >= plan.guard_lo) throw std::invalid_argument("guest RAM too small for this program (--mem)");

    ServerOptions so;
    if (wants_private_tmp(opts)) tmp_ = PrivateTmp::create();
    const auto mounts = guest_mounts(opts, tmp_ ? tmp_->host_dir() : "");
    if (!mounts.empty())
        so.share = std::make_shared<GuestFs>(
            mounts, opts.libcuda_overlay.empty() ? nullptr : std::make_shared<LibraryOverlay>(opts.libcuda_overlay));
    so.exe_host_path = exe_path;
    so.exe_guest_path = guest_exe_path(exe_path, opts.root_dir);
    so.cwd = guest_start_cwd(opts);
    so.cpuid = opts.cpuid;
    if (!opts.syscall_trace.empty()) so.trace = SyscallTrace::open(opts.syscall_trace);

    // A dynamic executable starts in its interpreter, read from the guest's
    // root and placed at the top of the area below the stack.
    start_ = image_.entry;
    uint64_t interp_pages_end = 0;
    if (!image_.interp.empty()) {
        const std::string what = "interpreter " + image_.interp;
        if (!so.share) throw ImageError("guest image refused: dynamic executable: its " + what + " needs --root (e.g. --root /)");
        const int fd = so.share->open(-1, image_.interp, O_RDONLY, 0);
        if (fd < 0) throw ImageError("guest image refused: " + what + ": " + std::strerror(-fd) + " in the guest's root");
        const FdImage interp(UniqueFd(fd), what);
        const uint64_t base = place_interpreter(interp, brk_start, plan.guard_lo);
        interp_ = load_linux_elf_at(interp, mem, base, plan.guard_lo);
        start_ = interp_->entry;
        interp_pages_end = (interp_->end + kPage - 1) & ~(kPage - 1);
    }

    boot.linux_abi = true;
    boot.guard_2m_gpa = plan.guard_lo;
    boot.entry = start_;
    boot.image_end = image_.end;
    write_boot_structures(mem, boot);

    so.console_text = std::move(console_text);
    const std::optional<uint64_t> seed = opts.seeded ? std::optional<uint64_t>(boot.seed) : std::nullopt;
    so.seed = seed;
    so.max_fds = opts.max_fds;
    so.futex_spin_ns = opts.futex_spin_ns;
    if (opts.raw_stdio) so.stdio = HostStdio::take();
    so.window_slots = opts.window_slots;
    so.window_limits = opts.window_limits;
    struct utsname u {};
    if (::uname(&u) == 0) so.kernel_release = u.release;

    ProcessLayout layout;
    layout.managed_lo = KVMGPU_IMAGE_BASE;
    layout.managed_hi = plan.guard_lo;
    layout.brk_start = brk_start;
    layout.stack_lo = plan.stack_lo;
    layout.stack_top = plan.stack_top;
    // Below the image base the VMM's pages: ring 0's, or read-only to ring 3
    // (boot_state.h, linux_low_page_flags), and no system call's memory
    // either (EFAULT, as for a kernel address on Linux).
    layout.unmapped = {{0, KVMGPU_IMAGE_BASE}, {plan.guard_lo, plan.guard_lo + KVMGPU_LINUX_GUARD_BYTES}};
    layout.alias_tables_lo = boot_tables_end(ram, true);
    layout.alias_tables_hi = KVMGPU_BOOT_TABLES_END;
    layout.images.push_back({image_.lowest, brk_start, "rwxp", so.exe_guest_path});
    if (interp_) layout.images.push_back({interp_->lowest, interp_pages_end, "rwxp", image_.interp});

    // Start-up stack: argv[0] is the program's name as a shell gives it:
    // its file name, or with a root the path the guest knows it by.
    StartupInfo info;
    info.argv.push_back(opts.root_dir.empty() ? base_name(exe_path) : so.exe_guest_path);
    info.argv.insert(info.argv.end(), opts.args.begin(), opts.args.end());
    info.envp = {opts.root_dir.empty() ? "PATH=/" : "PATH=/usr/local/bin:/usr/bin:/bin", "TERM=dumb"};
    if (tmp_) { // a writable home and temporary directory under a read-only root
        info.envp.push_back(std::string("HOME=") + kPrivateTmpGuestPath);
        info.envp.push_back(std::string("TMPDIR=") + kPrivateTmpGuestPath);
    } else {
        info.envp.push_back("HOME=/");
    }
    info.envp.insert(info.envp.end(), opts.env.begin(), opts.env.end());
    info.execfn = so.exe_guest_path;
    info.random = startup_random(seed);
    info.auxv = linux_auxv(image_, interp_ ? interp_->base : 0, hwcap, min_signal_stack(xstate_));
    if (vdso_) {
        // The clock page stays invalid (the vDSO makes system calls) until
        // prepare_vcpu has read the vCPU's TSC.
        static_assert(sizeof(kvmgpu_vvar) <= KVMGPU_LINUX_VDSO_GPA - KVMGPU_LINUX_VVAR_GPA);
        const kvmgpu_vvar invalid{};
        if (kvmgpu_vdso_image_size > KVMGPU_LINUX_VDSO_MAX ||
            !mem.write(memmap::GuestPhysAddr{KVMGPU_LINUX_VDSO_GPA}, kvmgpu_vdso_image, kvmgpu_vdso_image_size) ||
            !mem.write(memmap::GuestPhysAddr{KVMGPU_LINUX_VVAR_GPA}, &invalid, sizeof invalid))
            throw std::runtime_error("the vDSO does not fit its place in guest RAM");
        info.auxv.push_back({AT_SYSINFO_EHDR, KVMGPU_LINUX_VDSO_GPA});
        layout.images.push_back({KVMGPU_LINUX_VVAR_GPA, KVMGPU_LINUX_VVAR_GPA + kPage, "r--p", "[vvar]"});
        const uint64_t vdso_end = (KVMGPU_LINUX_VDSO_GPA + kvmgpu_vdso_image_size + kPage - 1) & ~(kPage - 1);
        layout.images.push_back({KVMGPU_LINUX_VDSO_GPA, vdso_end, "r-xp", "[vdso]"});
    }
    const StartupStack stack = build_startup_stack(plan.stack_top, info);
    if (stack.sp < plan.stack_lo || !mem.write(memmap::GuestPhysAddr{stack.sp}, stack.bytes.data(), stack.bytes.size()))
        throw std::invalid_argument("guest arguments do not fit the start-up stack");
    sp_ = stack.sp;

    server_ = std::make_unique<SyscallServer>(mem, std::move(layout), std::move(so));
    // The program's own pages and the stub area below it are not the
    // allocator's, nor the interpreter's.
    server_->address_space().reserve(image_.lowest, brk_start);
    if (interp_) server_->address_space().reserve(interp_->lowest, interp_pages_end);
}

void LinuxProcess::prepare_vcpu(VcpuFd& vcpu, bool sync_regs) {
    sync_regs_ = sync_regs;
    vcpu.set_sregs(linux_sregs(vcpu.sregs(), xstate_.enabled()));
    vcpu.set_msrs(linux_syscall_msrs());
    kvm_regs r = entry_regs(start_);
    r.rdi = 0; // no boot-info pointer: the ABI's registers are all 0 but RSP
    r.rsp = sp_;
    r.rflags = kUserRflags;
    vcpu.set_regs(r);
    set_initial_fpu(vcpu, true);
    if (sync_regs_) vcpu.enable_sync_regs();
    const uint64_t khz = vcpu.tsc_khz();
    const std::optional<int64_t> offset = vdso_ && khz ? tsc_offset(vcpu) : std::nullopt;
    if (offset) {
        clock_.emplace(khz, *offset, read_host_clocks());
        write_vvar();
    }
}

void LinuxProcess::prepare_thread_vcpu(VcpuFd& vcpu, const kvm_regs& regs, const kvm_sregs& sregs) {
    vcpu.set_sregs(sregs);
    vcpu.set_msrs(linux_syscall_msrs());
    vcpu.set_regs(regs);
    set_initial_fpu(vcpu, true);
    if (sync_regs_) vcpu.enable_sync_regs();
    vcpu.clear_synced_dirty(); // a reused vCPU's last system call must not overwrite this state
}

void LinuxProcess::set_initial_fpu(VcpuFd& vcpu, bool with_xcr0) const {
    if (!xstate_.enabled()) return vcpu.set_fpu(initial_fpu());
    if (with_xcr0) vcpu.set_xcr0(xstate_.xcr0);
    if (!vcpu.set_xsave(initial_xsave())) throw KvmError("KVM_SET_XSAVE (the initial state)", errno);
}

void LinuxProcess::follow_clock() {
    // Whichever vCPU thread gets here first moves the clock; the others go on.
    std::unique_lock lock(clock_mu_, std::try_to_lock);
    if (!lock || !clock_->due(__rdtsc())) return;
    clock_->follow(read_host_clocks());
    write_vvar();
}

void LinuxProcess::write_vvar() {
    // A seqlock (odd, the page, even): other vCPUs may read it while it is written.
    kvmgpu_vvar page = clock_->page();
    const uint32_t odd = vvar_seq_ + 1;
    vvar_seq_ += 2;
    const auto at = memmap::GuestPhysAddr{KVMGPU_LINUX_VVAR_GPA};
    mem_.write(at, &odd, sizeof odd);
    page.seq = odd;
    mem_.write(at, &page, sizeof page);
    mem_.write(at, &vvar_seq_, sizeof vvar_seq_);
}

std::optional<SyscallOutcome> LinuxProcess::on_port_write(VcpuFd& vcpu, uint32_t tid) {
    // With sync regs (prepare_vcpu) the state is in the kvm_run page: no ioctl.
    const bool synced = vcpu.sync_regs_enabled();
    kvm_regs r = synced ? vcpu.synced().regs : vcpu.regs();
    kvm_sregs s = synced ? vcpu.synced().sregs : vcpu.sregs();
    // Only the stub's `out` is a system call. kvm-pvm exits with RIP after
    // it; VMX and SVM (fast PIO) exit with RIP on it and would step over it
    // at the next KVM_RUN, which they skip once RIP has moved (as below).
    // CS is not checked: kvm-pvm reports the ring-3 selector here. The
    // stub's page is user and read-only (linux_low_page_flags): ring 3 may
    // jump to it, which is a system call served and returned from by the
    // same rules as one made with `syscall`.
    if (r.rip != KVMGPU_LINUX_SYSCALL_STUB_GPA && r.rip != KVMGPU_LINUX_SYSCALL_STUB_GPA + 2) return std::nullopt;
    if (r.rax == SYS_rt_sigreturn) return sigreturn(vcpu, tid, r, s);
    SyscallCall call;
    call.nr = r.rax;
    call.tid = tid;
    const uint64_t args[6] = {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9};
    std::copy(std::begin(args), std::end(args), call.arg);
    CpuState cpu{s.fs.base, s.gs.base};
    SyscallOutcome out = server_->serve(call, cpu);
    out.nr = call.nr;
    if (clock_) follow_clock();
    if (out.exited || out.thread_exited) return out; // nothing to return to
    // Back to ring 3 after the `syscall`, as sysret would: RIP from RCX,
    // RFLAGS from R11, the user segments (user_return.h).
    if (std::string refused = user_return_refusal(r.rcx); !refused.empty()) {
        if (out.clone) server_->clone_failed(out.clone->tid);
        out.clone.reset();
        out.stopped = std::move(refused);
        return out;
    }
    r.rip = r.rcx;
    r.rflags = user_rflags(r.r11);
    const kvm_sregs user = linux_sregs(s);
    // The segment state is written only when it differs (on kvm-pvm CS and
    // SS already read as ring 3's here; VMX and SVM show the kernel's).
    const bool sregs_change = s.cs.selector != user.cs.selector || s.ss.selector != user.ss.selector ||
                              s.cs.dpl != 3 || s.fs.base != cpu.fs_base || s.gs.base != cpu.gs_base;
    s.cs = user.cs;
    s.ss = user.ss;
    s.fs.base = cpu.fs_base;
    s.gs.base = cpu.gs_base;
    if (out.clone) {
        kvm_regs child = r;
        child.rax = 0;
        child.rsp = out.clone->stack;
        kvm_sregs child_s = s;
        child_s.fs.base = out.clone->fs_base;
        const int64_t rc = spawn_ ? spawn_(*out.clone, child, child_s) : -EAGAIN;
        if (rc < 0) {
            server_->clone_failed(out.clone->tid);
            out.ret = rc;
            out.clone.reset();
        }
    }
    r.rax = static_cast<uint64_t>(out.ret);
    // A signal the guest sent itself, unblocked now: its handler runs first.
    if (std::string ended = deliver_pending(vcpu, tid, r); !ended.empty()) {
        out.stopped = std::move(ended);
        return out;
    }
    write_state(vcpu, r, sregs_change ? &s : nullptr);
    return out;
}

void LinuxProcess::write_state(VcpuFd& vcpu, const kvm_regs& r, const kvm_sregs* s) {
    if (vcpu.sync_regs_enabled()) {
        vcpu.synced().regs = r;
        uint64_t dirty = KVM_SYNC_X86_REGS;
        if (s) {
            vcpu.synced().sregs = *s;
            dirty |= KVM_SYNC_X86_SREGS;
        }
        vcpu.mark_synced_dirty(dirty);
    } else {
        vcpu.set_regs(r);
        if (s) vcpu.set_sregs(*s);
    }
}

std::string LinuxProcess::push_handler(VcpuFd& vcpu, uint32_t tid, const SignalDelivery& d, const SignalInfo& info,
                                       kvm_regs& regs) {
    FrameIn in;
    in.regs = regs;
    in.saved_mask = d.saved_mask;
    in.alt = d.alt;
    in.xstate = xstate_;
    if (xstate_.enabled()) {
        const KvmXsaveArea area = vcpu.xsave();
        const auto* bytes = reinterpret_cast<const uint8_t*>(area.region);
        in.fpu.assign(bytes, bytes + kKvmXsaveBytes);
    } else {
        in.fpu = fx_from_kvm(vcpu.fpu());
    }
    auto pushed = push_signal_frame(server_->user_memory(), d.act, info, in);
    if (auto* why = std::get_if<std::string>(&pushed)) return *why;
    const Delivered& done = std::get<Delivered>(pushed);
    server_->signal_frame_pushed(tid, done.on_altstack);
    regs = done.regs;
    return "";
}

std::string LinuxProcess::deliver_pending(VcpuFd& vcpu, uint32_t tid, kvm_regs& regs) {
    const PendingSignal p = server_->take_pending(tid);
    if (!p.ends.empty()) return p.ends;
    if (!p.deliver) return "";
    SignalInfo info;
    info.signo = p.deliver->sig;
    info.code = p.deliver->code;
    info.from_process = true;
    const std::string why = push_handler(vcpu, tid, *p.deliver, info, regs);
    return why.empty() ? "" : "guest fault: " + signal_name(info.signo) + " could not be delivered: " + why;
}

SyscallOutcome LinuxProcess::sigreturn(VcpuFd& vcpu, uint32_t tid, const kvm_regs& r, kvm_sregs s) {
    SyscallOutcome out;
    out.nr = SYS_rt_sigreturn;
    auto popped = pop_signal_frame(server_->user_memory(), r.rsp, r, xstate_, mxcsr_mask_);
    if (auto* why = std::get_if<std::string>(&popped)) {
        out.stopped = "guest fault: rt_sigreturn refused: " + *why;
        return out;
    }
    Restored& back = std::get<Restored>(popped);
    if (back.fpu_refused.empty() && !load_fpu(vcpu, back.fpu)) back.fpu_refused = "KVM refused its FPU state";
    out.ret = static_cast<int64_t>(back.regs.rax);
    if (!back.fpu_refused.empty()) {
        // As Linux: the registers and the mask as the frame says, the
        // sigaltstack as it is, the FPU state initial, and SIGSEGV.
        server_->signal_returned(tid, back.mask, std::nullopt);
        set_initial_fpu(vcpu, false);
        const std::string ended = "guest fault: rt_sigreturn refused: " + back.fpu_refused;
        const auto delivery = server_->fault_signal(tid, SIGSEGV);
        SignalInfo info;
        info.signo = SIGSEGV;
        info.code = 0x80; // SI_KERNEL
        if (!delivery) {
            out.stopped = ended + " (SIGSEGV)";
            return out;
        }
        if (std::string why = push_handler(vcpu, tid, *delivery, info, back.regs); !why.empty()) {
            out.stopped = ended + "; its SIGSEGV not delivered: " + why;
            return out;
        }
    } else {
        server_->signal_returned(tid, back.mask, back.alt);
    }
    // The mask just restored may unblock a pending signal.
    if (std::string ended = deliver_pending(vcpu, tid, back.regs); !ended.empty()) {
        out.stopped = std::move(ended);
        return out;
    }
    const kvm_sregs user = linux_sregs(s);
    s.cs = user.cs;
    s.ss = user.ss;
    write_state(vcpu, back.regs, &s);
    return out;
}

bool LinuxProcess::load_fpu(VcpuFd& vcpu, const std::vector<uint8_t>& fpu) const {
    if (!xstate_.enabled()) {
        vcpu.set_fpu(kvm_from_fx(fpu, mxcsr_mask_));
        return true;
    }
    KvmXsaveArea area{};
    if (fpu.size() != sizeof area) return false;
    std::memcpy(area.region, fpu.data(), sizeof area);
    return vcpu.set_xsave(area);
}

bool LinuxProcess::deliver_fault(VcpuFd& vcpu, uint32_t vector, uint32_t tid) {
    const bool synced = vcpu.sync_regs_enabled();
    const kvm_regs r = synced ? vcpu.synced().regs : vcpu.regs();
    kvm_sregs s = synced ? vcpu.synced().sregs : vcpu.sregs();
    if (vector >= 32) return false;
    // The stub's stack (platform_abi.h): saved RDX, RAX, then [error,] RIP, CS, RFLAGS, RSP, SS.
    const bool has_error = exception_has_error_code(vector);
    uint64_t stack[8] = {};
    const uint64_t bytes = 8 * (2 + (has_error ? 1 : 0) + 5);
    if (!mem_.read(memmap::GuestPhysAddr{r.rsp}, stack, bytes)) return false;
    const uint64_t* frame = stack + 2 + (has_error ? 1 : 0);
    if ((frame[1] & 3) != 3) return false; // not ring 3's fault (the VMM's stub): never the guest's signal
    const auto info = fault_signal_info(vector, has_error ? stack[2] : 0, frame[0], s.cr2);
    if (!info) return false;
    const auto delivery = server_->fault_signal(tid, info->signo);
    if (!delivery) {
        // The run ends with the fault's line: say whose code it was in.
        log_info("linux guest: %s at RIP 0x%llx, in %s", signal_name(info->signo).c_str(),
                 static_cast<unsigned long long>(frame[0]), server_->place_of(frame[0]).c_str());
        return false;
    }
    kvm_regs g = r;
    g.rdx = stack[0];
    g.rax = stack[1];
    g.rip = frame[0];
    g.rflags = frame[2];
    g.rsp = frame[3];
    if (std::string why = push_handler(vcpu, tid, *delivery, *info, g); !why.empty()) {
        log_warn("linux guest: %s for its fault not delivered: %s", signal_name(info->signo).c_str(), why.c_str());
        return false;
    }
    const kvm_sregs user = linux_sregs(s);
    s.cs = user.cs;
    s.ss = user.ss;
    write_state(vcpu, g, &s);
    return true;
}

std::optional<std::string> LinuxProcess::window_exit(VcpuFd& vcpu, uint32_t tid, uint64_t addr,
                                                    std::span<uint8_t> data, bool write) {
    FileWindow* window = server_->file_window();
    if (!window || !window->overlaps(addr, std::max<uint64_t>(data.size(), 1))) return std::nullopt;
    if (window->access(addr, data, write)) return "";
    // The guest's SIGSEGV. The state before KVM finishes the access: a read's
    // RIP is still on it, a write's already past it (the emulator moved on).
    const bool synced = vcpu.sync_regs_enabled();
    const kvm_regs before = synced ? vcpu.synced().regs : vcpu.regs();
    // KVM finishes an MMIO exit on the next KVM_RUN; immediate_exit returns
    // right after, so the registers set below are not overwritten by it.
    vcpu.request_immediate_exit();
    (void)vcpu.run();
    char line[192];
    std::snprintf(line, sizeof line, "guest fault: %s of %zu bytes at 0x%llx in the file window (%s) at RIP 0x%llx",
                  write ? "write" : "read", data.size(), static_cast<unsigned long long>(addr),
                  window->span(addr, std::max<uint64_t>(data.size(), 1), true) ? "not allowed by its protection"
                                                                            : "nothing mapped there",
                  static_cast<unsigned long long>(before.rip));
    const auto delivery = server_->fault_signal(tid, SIGSEGV);
    if (!delivery) return std::string(line);
    SignalInfo info;
    info.signo = SIGSEGV;
    info.code = window->span(addr, std::max<uint64_t>(data.size(), 1), true) ? SEGV_ACCERR : SEGV_MAPERR;
    info.addr = addr;
    info.trapno = 14; // #PF, as Linux reports a page fault
    info.error = write ? 0x7 : 0x5; // present, user, (write)
    info.cr2 = addr;
    kvm_regs g = before;
    if (std::string why = push_handler(vcpu, tid, *delivery, info, g); !why.empty())
        return std::string(line) + "; its handler not started: " + why;
    write_state(vcpu, g, nullptr);
    return "";
}

std::string describe_call(const SyscallOutcome& call) {
    return syscall_name(call.nr) + " returned " + std::to_string(call.ret);
}

std::string LinuxProcess::port_refusal(VcpuFd& vcpu, uint16_t port, bool in) const {
    // The system-call port's device (syscall_port.h) tells the stub's write from a stray one.
    if (port == KVMGPU_LINUX_SYSCALL_PORT && !in) return "";
    const uint64_t rip = vcpu.sync_regs_enabled() ? vcpu.synced().regs.rip : vcpu.regs().rip;
    // RIP on the stub's `out` (VMX, SVM) or after it (kvm-pvm).
    constexpr uint64_t kStubsEnd = KVMGPU_FAULT_STUBS_GPA + 32 * 16;
    if (port == KVMGPU_FAULT_PORT && !in && rip >= KVMGPU_FAULT_STUBS_GPA && rip <= kStubsEnd) return "";
    return port_refused(vcpu, port, in);
}

std::string LinuxProcess::port_refused(VcpuFd& vcpu, uint16_t port, bool in) const {
    const uint64_t rip = vcpu.sync_regs_enabled() ? vcpu.synced().regs.rip : vcpu.regs().rip;
    char line[192];
    std::snprintf(line, sizeof line,
                  "guest fault: port I/O (%s port 0x%x) at RIP 0x%llx: a Linux-ABI guest has no ports (IOPL 0)",
                  in ? "in from" : "out to", port, static_cast<unsigned long long>(rip));
    return line;
}

} // namespace kvmgpu::linux_abi
