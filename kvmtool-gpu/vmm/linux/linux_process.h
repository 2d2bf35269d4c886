// A Linux-ABI guest in a VM: lays out its RAM (program, brk and mmap
// area, guard, stack), loads the executable, builds the start-up stack and
// the vCPU state (ring 3 at the entry, LSTAR at the VMM's stub), and serves
// each `syscall` that reaches the stub's port. Owned by VirtualMachine.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kvmtool-gpu/kvm/vcpu_fd.h"
#include "kvmtool-gpu/vmm/boot_state.h"
#include "kvmtool-gpu/vmm/linux/guest_clock.h"
#include "kvmtool-gpu/vmm/linux/guest_xstate.h"
#include "kvmtool-gpu/vmm/linux/linux_elf.h"
#include "kvmtool-gpu/vmm/linux/private_tmp.h"
#include "kvmtool-gpu/vmm/linux/root_fs.h"
#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

// One `--share DIR[:GUEST_PATH][:ro]`.
struct ShareSpec {
    std::string dir;
    std::string guest_path; // empty: "/" without a root, else DIR's absolute path
    bool read_only = false;
};

struct LinuxGuestOptions {
    std::vector<std::string> args;  // argv[1..]
    std::vector<std::string> env;   // "K=V", after the defaults HOME=/ PATH=/ TERM=dumb
    std::string root_dir;           // --root: the guest's "/", read-only; empty: none
    std::vector<ShareSpec> shares;  // each at its own guest path; none and no root: no files
    std::string cwd;                // --cwd: where it starts; empty: guest_start_cwd's default
    // The guest libcuda.so.1 the VMM lends for the guest's libcuda.so* names
    // (library_overlay.h); empty: the root's own files (--no-libcuda-overlay).
    std::string libcuda_overlay;
    bool sync_regs = true;          // exchange registers through kvm_run where KVM can (--no-sync-regs: ioctls)
    bool vdso = true;               // clocks without a system call (--no-vdso: every clock read is one)
    bool file_window = true;        // read-only files mapped through memory slots (--no-file-window: copied)
    std::string syscall_trace;      // --trace-syscalls: a host file for a line per call (syscall_trace.h); empty: none
    uint32_t max_threads = 64;      // guest threads alive at once, the first included (--max-threads)
    int64_t futex_spin_ns = 0;      // --futex-spin-us (ServerOptions::futex_spin_ns)
    bool raw_stdio = false;         // --stdio raw: fds 0-2 are the VMM's own (host_stdio.h), not the console
    // --seed given: getrandom and AT_RANDOM (so stack canaries) come from it
    // and repeat; else from the host's getrandom, different each run.
    bool seeded = false;
    int max_fds = kMaxFds;          // its descriptor table (fewer where VMs share the VMM's limit)
    // The file window's KVM memory slots (file_window.h); null: file
    // mappings are copied into RAM.
    MemslotSetter window_slots;
    WindowLimits window_limits;
    // The XSAVE state the guest runs with (guest_xstate.h), chosen from
    // KVM's by VirtualMachine; none: FXSAVE only.
    GuestXstate xstate;
    std::vector<kvm_cpuid_entry2> cpuid; // the guest's CPUID, for /proc/cpuinfo (empty: the host's)
};

// Where things go in a guest of `ram` bytes: stack at the top (8 MiB, 2 MiB
// below 64 MiB of RAM), a 2 MiB unmapped guard under it, the program and
// the brk/mmap area below that.
struct RamPlan {
    uint64_t stack_lo, stack_top, guard_lo, image_limit;
};
RamPlan plan_ram(uint64_t ram);

// "mmap returned -12" for the run's last-state report.
std::string describe_call(const SyscallOutcome& call);
// The mounts the options ask for (root_fs.h): --root at "/" read-only, each
// share at its guest path (share_guest_path), and `private_tmp` (a host directory; empty: none)
// at kPrivateTmpGuestPath where wants_private_tmp. Empty: no files.
std::vector<MountSpec> guest_mounts(const LinuxGuestOptions& opts, const std::string& private_tmp = "");
// Where the guest starts (guest_cwd.h). --cwd (opts.cwd) must be an absolute
// guest path naming a directory in its mounts ("/" always may): else
// std::invalid_argument, one line naming --cwd. Without --cwd: the host's
// current directory where the guest sees it at the same path ($PWD when it
// names the current directory, else the physical path): with --root /, or
// inside a share mounted at its own path; else "/".
std::string guest_start_cwd(const LinuxGuestOptions& opts);
// Where a share appears: as given; else "/" without a root, DIR's absolute path with one.
std::string share_guest_path(const ShareSpec& share, bool with_root);
// A guest with a root and no share at /tmp gets a private temporary
// directory, its HOME and TMPDIR (private_tmp.h).
bool wants_private_tmp(const LinuxGuestOptions& opts);
// The auxiliary vector's numbers for `exe` (AT_RANDOM, AT_EXECFN,
// AT_PLATFORM are linux_stack's; AT_SYSINFO_EHDR the vDSO's): AT_BASE is
// the interpreter's load bias (0: static), AT_ENTRY the program's entry.
constexpr uint64_t kAtMinSigStkSz = 51; // AT_MINSIGSTKSZ (older elf.h lack it)
// AT_MINSIGSTKSZ is `min_sigstack` (guest_signals.h's min_signal_stack).
std::vector<std::pair<uint64_t, uint64_t>> linux_auxv(const LinuxImage& exe, uint64_t interp_base, uint64_t hwcap,
                                                      uint64_t min_sigstack);
// The executable's path as the guest sees it: its place under --root when it
// lies there, else "/" and its file name.
std::string guest_exe_path(const std::string& exe_path, const std::string& root_dir);

class LinuxProcess {
public:
    // Loads and lays out everything in guest RAM (the boot structures too,
    // from `boot`); throws ImageError / std::invalid_argument /
    // std::runtime_error (--share) with one line.
    LinuxProcess(const ImageSource& image, const memmap::GuestMemory& mem, const std::string& exe_path,
                 const LinuxGuestOptions& opts, BootParams boot, uint64_t hwcap,
                 std::function<void(std::string_view)> console_text);

    // Registers, MSRs, XCR0 and FPU state for the first KVM_RUN (CR4.OSXSAVE
    // and XCR0 where opts.xstate has XSAVE); `sync_regs`: KVM offers
    // KVM_CAP_SYNC_REGS, so system calls exchange registers without ioctls.
    // Starts the vDSO's clock from the vCPU's TSC.
    void prepare_vcpu(VcpuFd& vcpu, bool sync_regs);

    // A new thread's vCPU: the state `regs`/`sregs` (clone's child: the
    // parent's at the return, RAX 0, its stack and FS base) and the MSRs,
    // XCR0, initial FPU state and register exchange of the first vCPU.
    void prepare_thread_vcpu(VcpuFd& vcpu, const kvm_regs& regs, const kvm_sregs& sregs);

    // Starts a thread clone() asked for, on any vCPU thread: its tid, or
    // -EAGAIN (-errno) when it cannot. Without one, clone gets EAGAIN.
    using Spawn = std::function<int64_t(const ThreadStart&, const kvm_regs&, const kvm_sregs&)>;
    void set_spawn(Spawn spawn) { spawn_ = std::move(spawn); }

    // A write to KVMGPU_LINUX_SYSCALL_PORT by thread `tid`'s vCPU: serves
    // the call if it came from the stub (nullopt otherwise: a stray port
    // write from ring 3) and puts the vCPU back in ring 3 after the
    // `syscall`. Safe from several vCPU threads at once.
    std::optional<SyscallOutcome> on_port_write(VcpuFd& vcpu, uint32_t tid = 1);

    // The fault port written by the VMM's exception stub (vector `vector`)
    // on thread `tid`'s vCPU: when ring 3 faulted and the guest handles the
    // signal Linux would send (guest_signals.h), its handler starts on that
    // vCPU and this returns true (the run goes on); false leaves the fault
    // to end the run as before.
    bool deliver_fault(VcpuFd& vcpu, uint32_t vector, uint32_t tid = 1);

    // A port exit of this guest's vCPU, before the bus: "" for a write to
    // the system-call port (its device serves the stub's, refuses the rest)
    // and for the VMM's exception stubs writing the fault port (from ring
    // 0), else the one line that ends the run. Ring 3 has no port (IOPL 0,
    // the TSS opens none); where KVM exits on its port I/O anyway (kvm-pvm),
    // it must not reach the exit device or the fault port.
    std::string port_refusal(VcpuFd& vcpu, uint16_t port, bool in) const;
    // The line that ends the run for ring 3's access to `port`.
    std::string port_refused(VcpuFd& vcpu, uint16_t port, bool in) const;
    // An MMIO exit of thread `tid`'s vCPU at `addr`: nullopt when not in the
    // file window (file_window.h). In it: "" when the access was done on the
    // host mapping (the guest's protection allows it: a slot was being
    // replaced) or the guest's SIGSEGV handler now runs; else the line that
    // ends the run (a write to a read-only file mapping, a hole, PROT_NONE).
    // A write's signal frame holds the RIP after the write (KVM has already
    // moved past it); a read's, the read.
    std::optional<std::string> window_exit(VcpuFd& vcpu, uint32_t tid, uint64_t addr, std::span<uint8_t> data,
                                           bool write);

    const LinuxImage& image() const { return image_; }
    // The interpreter of a dynamic executable (nullopt: static).
    const std::optional<LinuxImage>& interpreter() const { return interp_; }
    const SyscallServer& server() const { return *server_; }
    SyscallServer& server() { return *server_; }

    // The vDSO's clock (nullopt: no vDSO, or no usable TSC).
    const std::optional<GuestClock>& clock() const { return clock_; }

private:
    void write_vvar();
    // Registers back to the vCPU (sregs too when given), through kvm_run where synced.
    static void write_state(VcpuFd& vcpu, const kvm_regs& r, const kvm_sregs* s);
    // Pushes the frame for `d` over `regs` (the state the handler returns
    // to) and sets `regs` to the handler's entry; "" or why not.
    std::string push_handler(VcpuFd& vcpu, uint32_t tid, const SignalDelivery& d, const SignalInfo& info,
                             kvm_regs& regs);
    // A pending signal at a return to ring 3: "" (none, or its handler set
    // up in `regs`), else the line that ends the run.
    std::string deliver_pending(VcpuFd& vcpu, uint32_t tid, kvm_regs& regs);
    // rt_sigreturn: every register from the frame (guest_signals.h); a
    // refused FPU state gets the guest SIGSEGV, as on Linux.
    SyscallOutcome sigreturn(VcpuFd& vcpu, uint32_t tid, const kvm_regs& r, kvm_sregs s);
    // The initial FPU state (XCR0 too with `with_xcr0`: KVM_SET_XCRS is
    // not among a vCPU thread's ioctls); throws KvmError where KVM refuses it.
    void set_initial_fpu(VcpuFd& vcpu, bool with_xcr0) const;
    // A frame's validated FPU state (signal_fpstate.h) into the vCPU; false where KVM refuses it.
    bool load_fpu(VcpuFd& vcpu, const std::vector<uint8_t>& fpu) const;
    void follow_clock();

    const memmap::GuestMemory& mem_;
    bool vdso_ = false;
    std::optional<GuestClock> clock_;
    uint32_t vvar_seq_ = 0;
    std::mutex clock_mu_; // one vCPU thread at a time moves the vDSO's clock
    Spawn spawn_;
    LinuxImage image_;
    std::optional<LinuxImage> interp_;
    uint64_t start_ = 0; // the first instruction: the interpreter's entry, or the program's
    uint64_t sp_ = 0;
    bool sync_regs_ = false;
    GuestXstate xstate_;
    uint32_t mxcsr_mask_ = 0xffbf;
    std::unique_ptr<PrivateTmp> tmp_; // before server_: the server's mounts use it
    std::unique_ptr<SyscallServer> server_;
};

} // namespace kvmgpu::linux_abi
