// kvmtool-gpu as a library: boot a guest in a KVM virtual machine, with
// vGPUs whose CUDA calls run on the host's GPUs, from your own program.
//
//   kvmgpu::prepare_process();                 // top of main, before threads
//   kvmgpu::VmConfig cfg;
//   cfg.guest = "build/guests/vecadd.elf";
//   cfg.vgpu = kvmgpu::VgpuSpec{};          // one vGPU on GPU 0
//   kvmgpu::Machine vm(cfg);                   // throws kvmgpu::Error
//   kvmgpu::Result r = vm.run();
//   std::printf("%s, %llu vGPU commands\n", kvmgpu::to_string(r.outcome),
//               (unsigned long long)vm.vgpu_counters().commands);
//
// Standard C++20 types only: no KVM, CUDA or other library's type appears
// here. What is stable, and the lifetime and threading rules: docs/embedding.md.
// The same API for C: kvmgpu/kvmgpu.h.
#pragma once

#include <cstdint>
#include <utility>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#define KVMGPU_API_VERSION 1

namespace kvmgpu {

// Every failure the library reports: one line, as the CLI prints it (bad
// options, a missing guest, no /dev/kvm, a vGPU backend that cannot be had).
// Nothing the guest does throws: that is a Result.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Host pages backing guest RAM. Auto: 2 MiB where the huge-page pool has room
// for the RAM of every VM this process runs (set_vms_in_process), else 4 KiB.
enum class PageSize { Auto, k4K, k2M, k1G };

// A host directory the guest sees (Linux-ABI guests).
struct Share {
    std::string host_dir;
    std::string guest_path; // "": "/" without a root, host_dir's absolute path with one
    bool read_only = false;
};

enum class VgpuBackend { Auto, Cuda, Host }; // Auto: CUDA where a GPU and driver exist, else Host
enum class GpuWorker { Process, Inline, Always }; // where a CUDA backend runs (docs/security.md)
enum class Doorbell { Adaptive, Trap, Ioeventfd, Poll };
const char* to_string(Doorbell d); // "adaptive", "trap", ...

// How the VMs of this process share a GPU: each vGPU's worker with a CUDA
// context of its own (no sharing object), or every worker a client of one
// MPS server. Open one and give it to every VgpuSpec that should share it;
// it stops an MPS daemon it started when its last holder goes.
struct MpsOptions {
    std::string pipe_dir;           // attach to the daemon there; "": start one
    unsigned thread_percentage = 0; // 1..100 of the SMs per worker; 0: unset
    uint64_t pinned_mem_limit = 0;  // bytes of device memory per worker, whole MiB; 0: unset
    bool fall_back_to_contexts = false; // when MPS cannot be had: warn and use contexts (else Error)
};
class GpuSharing {
public:
    // Starts or attaches to the MPS control daemon for `gpus`. Throws Error.
    static std::shared_ptr<GpuSharing> open_mps(const MpsOptions& options, const std::vector<int>& gpus);
    ~GpuSharing();
    std::string describe() const; // one line
    struct Impl;
    explicit GpuSharing(std::unique_ptr<Impl> impl);
    const Impl& impl() const { return *impl_; }

private:
    std::unique_ptr<Impl> impl_;
};

// One vGPU device set: device i of the guest runs on physical GPU gpus[i].
// The limits bound what the guest may ask for (per VM).
struct VgpuSpec {
    VgpuBackend backend = VgpuBackend::Auto;
    std::vector<int> gpus = {0};
    GpuWorker worker = GpuWorker::Process;
    bool worker_sandbox = true; // a worker process confines itself once CUDA is up
    Doorbell doorbell = Doorbell::Adaptive;
    bool lazy_ram_registration = true; // register guest RAM as copies reach it (else all at start)
    // Bytes of device memory the VM may hold; unset: the whole GPU where the
    // process runs one VM (set_vms_in_process), else 4 GiB.
    std::optional<uint64_t> device_mem_quota;
    uint32_t max_handles = 65536;        // per handle table
    uint32_t max_graph_nodes = 65536;
    uint64_t max_module_bytes = 64ull << 20;
    uint32_t max_registrations = 1024;   // registered guest buffers
    uint64_t max_registered_bytes = 0;   // their bytes together; 0: the VM's RAM size
    uint64_t max_alias_mappings = 262144;
    uint32_t max_ring = 4096;            // command ring entries, a power of two
    uint32_t poll_spin_us = 50;          // Doorbell::Poll: spin before sleeping
    uint32_t poll_max_us = 20000;        // Doorbell::Adaptive: its polling window's cap
    std::string cublas_path;           // the host libcublas (process-wide; "": the default search)
    std::shared_ptr<GpuSharing> sharing; // null: a CUDA context per worker
    // A GPU server on another host ("HOST:PORT", kvmtool-gpu gpu-server) runs
    // the vGPU's commands instead of a local backend; remote_key_file holds
    // the key both were given (mode 0600). backend, gpus, worker and the
    // quotas are then the server's.
    std::string remote;
    std::string remote_key_file;
};

// One guest. A project image (guest-stub/) or an x86-64 Linux executable,
// static or dynamic, whose system calls the VMM serves (docs/runtime-api.md).
struct VmConfig {
    std::string guest;             // an ELF path, or the name of a built guest ("hello", "vecadd")
    std::vector<std::string> args; // Linux-ABI: argv[1..]
    std::vector<std::string> env;  // Linux-ABI: "K=V", after HOME=/ PATH=/ TERM=dumb
    std::string cmdline;           // project image: its argument string
    uint64_t ram_bytes = 512ull << 20; // a multiple of 2 MiB
    PageSize pages = PageSize::Auto;
    bool prefault = false;          // fault in all RAM before boot (timed apart)
    double timeout_s = 60.0;        // 0: none
    std::optional<uint64_t> seed;   // unset: seed 1, and the host's randomness for getrandom
    std::string root;               // the guest's read-only "/"; "": none
    std::vector<Share> shares;
    std::string cwd;                // "": where the host's current directory is seen, else "/"
    bool libcuda_overlay = true;    // the guest's libcuda.so* are the VMM's guest libcuda
    uint32_t max_threads = 64;      // guest threads alive at once, 1..1024
    uint32_t futex_spin_us = 0;     // a futex wait first watches its word this long, 0..10000
    std::string syscall_trace;      // a host file for a line per guest system call; "": none
    bool seccomp = true;            // confine the vCPU thread with its seccomp filter
    bool sync_regs = true, vdso = true, file_window = true; // off only to compare their cost
    // A Linux-ABI guest's stdin, stdout and stderr are this process's own
    // descriptors 0, 1 and 2, its bytes unchanged (the console and `console`
    // then see none of them); a project image's lines go to stdout unprefixed.
    bool raw_stdio = false;
    // Each line the guest prints; empty: stdout, prefixed "guest: ". Called
    // on the vCPU's thread: it must not call back into this Machine.
    std::function<void(std::string_view line)> console;
    std::optional<VgpuSpec> vgpu; // none: no vGPU
};

enum class Outcome {
    GuestExit,     // the guest reported its exit code
    Timeout,       // VmConfig::timeout_s passed
    GuestFault,    // an exception in the guest
    TripleFault,   // an exception that could not even be delivered
    Halted,        // HLT with interrupts off, no exit reported
    EntryFailed,   // KVM could not enter the guest
    InternalError, // KVM reported an internal error
    Unexpected,    // any other exit
    BadRequest,    // the guest asked the VMM for something impossible
    Interrupted,   // Machine::stop()
};
const char* to_string(Outcome o);

// Nanoseconds, from the start of VM creation (run_ns: from the first entry).
struct Timings {
    uint64_t setup_ns = 0;
    uint64_t first_instruction_ns = 0; // 0 for a Linux-ABI guest (no boot marker)
    uint64_t main_ns = 0;
    uint64_t run_ns = 0;
    uint64_t prefault_ns = 0;
};

struct Result {
    Outcome outcome = Outcome::Unexpected;
    uint32_t exit_code = 0;
    std::string detail;        // one line
    std::string register_dump; // for unexpected exits
    Timings timings;
    uint64_t mmio_exits = 0, pio_exits = 0, exits = 0;
    std::string guest_code; // how the guest's code ran (ring, paging), one line
    std::string syscalls;   // Linux-ABI: the system-call counters, one line
    bool passed() const { return outcome == Outcome::GuestExit && exit_code == 0; }
};

struct VgpuCounters {
    uint64_t commands = 0, errors = 0;
    uint64_t bytes_htod = 0, bytes_dtoh = 0, bytes_dtod = 0;
    uint64_t kicks = 0, wakeups = 0, recoveries = 0;
    uint64_t ram_registered_bytes = 0, ram_register_ns = 0;
    // Commands the guest waited for (sent without the asynchronous flag),
    // and by command name, most first: the round trips a program pays.
    uint64_t waited = 0;
    std::vector<std::pair<std::string, uint64_t>> waited_by_command;
};

// The vGPU's backend once it is up (a GPU worker starts CUDA while the
// guest runs: asking waits for it).
struct VgpuStatus {
    std::string backend;          // which backend, and on a fall-back why
    bool ram_registered = false;  // guest RAM registered with the GPU (zero-copy)
    uint64_t registration_ns = 0;
    uint64_t ready_after_ns = 0;  // after the device started
};

// What the VM was built with, for a start-up line.
struct MachineSummary {
    std::string kvm;          // the vCPU backend (KVM flavour)
    std::string guest_path;
    uint64_t ram_bytes = 0;
    std::string host_pages;   // "4K", "2M", "1G"
    std::string cwd;          // Linux-ABI guest with files: where it starts
    std::string libcuda;      // which libcuda the guest gets ("" without files)
    std::string vgpu_backend; // the vGPU's backend as attached ("" without one)
    bool vgpu_ready = false;  // its backend was up when attached
    std::vector<std::string> notes; // lines worth showing (e.g. a lowered descriptor limit)
};

// Once, at the top of main, before any thread: ignores SIGXFSZ, raises the
// open-file limit, and starts the process that GPU workers are forked from
// while the process is still small. Optional; without it the first vGPU
// starts that process from wherever the program is then.
void prepare_process();
// How many Machines this process runs at once (default 1): per-process
// resources (open files, host mappings for guest buffers, huge pages for
// PageSize::Auto) are divided evenly among them. Set before creating them.
void set_vms_in_process(unsigned vms);

// One VM: built by the constructor, run once, torn down by the destructor.
class Machine {
public:
    // Checks the configuration before touching /dev/kvm, then builds the VM
    // and attaches its vGPU. Throws Error.
    explicit Machine(VmConfig config);
    ~Machine(); // stops and waits for a background run
    Machine(const Machine&) = delete;
    Machine& operator=(const Machine&) = delete;

    // Runs the guest to its end and returns how it ended; blocks the caller.
    // With VmConfig::seccomp the vCPU runs on a thread the library owns (the
    // filter is irreversible for its thread), else on the caller's. Once.
    Result run();
    // Starts the run on a thread of the library's; wait() returns its result.
    void start();
    Result wait();
    // Ends a run (now, or at its start) with Outcome::Interrupted. Any thread.
    void stop();

    MachineSummary info() const;
    VgpuCounters vgpu_counters() const; // zeros without a vGPU
    VgpuStatus vgpu_status() const;     // waits for the backend; Error without a vGPU

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

} // namespace kvmgpu
