// The GPU worker's sandbox (worker_sandbox.h) without a GPU: the filter made
// from worker_syscalls.cpp's table, each rule in a forked child; a sandboxed
// worker on the host backend runs the ring; a call outside the table ends
// that worker alone after its report naming the call, which reaches the VMM's
// stderr; the VMM says so in one line and replaces it, and another VM of the
// process goes on untouched; the recorder (syscall_recorder.h).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "kvmtool-gpu/devices/vgpu_worker/syscall_recorder.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_sandbox.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_syscalls.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr VgpuOptions kSandboxed{.worker_sandbox = true};

// Runs `body` in a forked child confined as a worker is after its start
// (with `namespaces`, after step 1 too; `before` runs unconfined); the
// child's wait status (exit code: body's result).
int confined(const std::function<int()>& body, bool namespaces = false, const std::function<void()>& before = {}) {
    const pid_t pid = fork();
    if (pid == 0) {
        if (before) before();
        try {
            if (namespaces) enter_worker_namespaces(/*host_shm=*/false);
            confine_worker();
        } catch (...) {
            _exit(99);
        }
        _exit(body());
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

bool killed_by_sigsys(int st) { return WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS; }
int exit_code(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st); }

// Everything written to the pipe `fds` until its last writer closes it (fds[1] is closed here).
std::string read_until_closed(int (&fds)[2]) {
    close(fds[1]);
    std::string text;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    return text;
}

TEST(WorkerSandbox, WhatTheTableAllowsRuns) {
    const int ok = confined([] {
        if (getppid() <= 0 || getpid() <= 0) return 1;
        char buf[64];
        const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC); // openat, read-only
        if (fd < 0 || read(fd, buf, sizeof buf) <= 0) return 2;
        close(fd);
        std::thread t([] {}); // clone3 refused (ENOSYS), then clone with CLONE_THREAD
        t.join();
        if (kill(getpid(), 0) != 0) return 3; // its own pid
        return 0;
    });
    EXPECT_EQ(exit_code(ok), 0);
}

TEST(WorkerSandbox, EachRuleDoesWhatItsVerdictSays) {
    const pid_t parent = getpid();
    struct Case {
        const char* what;
        std::function<int()> body; // returns 0 when the call was refused as expected
        bool dies;
    };
    const Case cases[] = {
        {"unshare", [] { return unshare(CLONE_NEWUSER); }, true},
        {"socket", [] { return static_cast<int>(syscall(SYS_socket, AF_INET, SOCK_STREAM, 0)); }, true},
        {"kill another pid", [parent] { return kill(parent, 0); }, true},
        {"fork", [] { return fork() >= 0 ? 0 : 1; }, true},
        {"TIOCSTI", [] { char c = 'x'; return ioctl(0, TIOCSTI, &c); }, true},
        {"ptrace", [] { return static_cast<int>(syscall(SYS_ptrace, 0, 0, 0, 0)); }, true},
        {"execve", [] { return execl("/bin/true", "true", nullptr); }, true},
        {"open for writing", [] { return open("/tmp/x", O_WRONLY | O_CREAT, 0600) < 0 && errno == EROFS ? 0 : 1; }, false},
        {"clone3", [] { return syscall(SYS_clone3, nullptr, 0) < 0 && errno == ENOSYS ? 0 : 1; }, false},
    };
    for (const Case& c : cases) {
        const int st = confined(c.body);
        if (c.dies) EXPECT_TRUE(killed_by_sigsys(st)) << c.what << ": status " << st;
        else EXPECT_EQ(exit_code(st), 0) << c.what;
    }
    // The recorder's labels agree with the filter on the same calls.
    const uint64_t none[6] = {}, other[6] = {1}, self[6] = {uint64_t(getpid())};
    const uint64_t write_open[6] = {0, 0, O_WRONLY | O_CREAT}, tiocsti[6] = {0, TIOCSTI};
    EXPECT_EQ(worker_verdict(SYS_socket, none, getpid(), false), Verdict::Killed);
    EXPECT_EQ(worker_verdict(SYS_kill, other, getpid(), false), Verdict::Killed);
    EXPECT_EQ(worker_verdict(SYS_kill, self, getpid(), false), Verdict::Allowed);
    EXPECT_EQ(worker_verdict(SYS_ioctl, tiocsti, getpid(), false), Verdict::Killed);
    EXPECT_EQ(worker_verdict(SYS_openat, write_open, getpid(), false), Verdict::Refused);
    EXPECT_EQ(worker_verdict(SYS_openat, none, getpid(), false), Verdict::Allowed);
    EXPECT_EQ(worker_verdict(SYS_openat, write_open, getpid(), true), Verdict::Allowed); // confined to its own /dev
    EXPECT_EQ(worker_verdict(SYS_clone3, none, getpid(), false), Verdict::Refused);
    EXPECT_EQ(worker_verdict(SYS_clone, none, getpid(), false), Verdict::Killed); // no CLONE_THREAD: a process
}

// A refused call is named on stderr, with its first arguments, before the
// worker ends with SIGSYS: a call outside the table, and one its rule refuses.
TEST(WorkerSandbox, ARefusedCallIsNamedBeforeTheWorkerEnds) {
    const pid_t parent = getpid();
    struct Case {
        std::function<void()> call;
        const char* report;
    };
    const Case cases[] = {
        {[] { syscall(SYS_socket, AF_INET, SOCK_STREAM, 0); }, "refused system call socket (0x29, arguments 0x2 0x1 0x0)"},
        {[parent] { kill(parent, 0); }, "refused system call kill (0x3e, arguments "},
    };
    for (const Case& c : cases) {
        int err[2];
        ASSERT_EQ(pipe(err), 0);
        const int st = confined(
            [&] {
                c.call();
                return 1; // survived
            },
            false, [&] { dup2(err[1], STDERR_FILENO); });
        const std::string text = read_until_closed(err);
        EXPECT_TRUE(killed_by_sigsys(st)) << c.report << ": status " << st;
        EXPECT_NE(text.find(std::string("vgpu-worker: fatal: the GPU worker's seccomp filter ") + c.report), std::string::npos)
            << text;
        EXPECT_NE(text.find("vgpu-worker: the call's stack holds these VMM code offsets:"), std::string::npos) << text;
    }
}

// A worker started from the zygote writes its report to the stderr the VMM
// had when the zygote started: the VMM's own. Run in a child of the test,
// whose zygote is its own (worker_zygote.h), started with stderr on a pipe.
TEST(WorkerSandbox, TheWorkersReportReachesTheVmmsStderr) {
    int err[2];
    ASSERT_EQ(pipe(err), 0);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(err[1], STDERR_FILENO);
        close(err[0]), close(err[1]);
        int code = 0;
        {
            WorkerFaults& faults = shared_faults();
            WorkerVgpu w(WorkerOptions{}, kSandboxed, faulty_factory(faults));
            if (w.rig.enable() != VGPU_SUCCESS) code = 2;
            faults.arm(WorkerFaults::DeniedCall);
            if (!code && w.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status != kWorkerDied) code = 3;
        } // the replacement worker quits
        _exit(code);
    }
    const std::string text = read_until_closed(err);
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_EQ(exit_code(st), 0) << text;
    EXPECT_NE(text.find("vgpu-worker: fatal: the GPU worker's seccomp filter refused system call socket (0x29, "
                        "arguments 0x2 0x1 0x0): ending the worker, which the VMM replaces"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("killed by SIGSYS: it made a system call its sandbox denies"), std::string::npos) << text;
}

// A worker a guest took over cannot read the VMM's memory (every VM of the
// process) through /proc: after both steps it has no CAP_SYS_PTRACE, and the
// VMM is not dumpable (as cli/main.cpp makes it).
TEST(WorkerSandbox, CannotReadTheVmmsMemoryThroughProc) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the namespaces step; as another user no capability is held anyway";
    ASSERT_EQ(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), 0);
    const std::string mem = "/proc/" + std::to_string(getpid()) + "/mem";
    const int st = confined([&mem] {
        const int fd = open(mem.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0) return 1; // it could read another process's memory
        return errno == EACCES || errno == EPERM ? 0 : 2;
    }, /*namespaces=*/true);
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    EXPECT_EQ(exit_code(st), 0) << "the confined worker opened " << mem;
}

// After both steps a worker may open for writing what its own /dev holds
// (the driver opens its nodes so, late) and nothing else: every other mount
// is read-only, and the host's other devices are not there.
TEST(WorkerSandbox, OpensForWritingReachOnlyItsOwnDev) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the namespaces step";
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const int st = confined([&fds] {
        close(fds[0]);
        auto say = [&](const char* line) {
            (void)!write(fds[1], line, std::strlen(line));
            return 1;
        };
        const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null < 0) return say("/dev/null not writable");
        close(null);
        const int shm = open("/dev/shm/kvmgpu-test", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (shm < 0) return say("its /dev/shm not writable");
        close(shm);
        if (open("/tmp/kvmgpu-worker-write-test", O_WRONLY | O_CREAT | O_CLOEXEC, 0600) >= 0 || errno != EROFS)
            return say("/tmp writable");
        if (access("/dev/kmsg", F_OK) == 0 || access("/dev/tty", F_OK) == 0) return say("a host device is there");
        return 0;
    }, /*namespaces=*/true);
    const std::string said = read_until_closed(fds);
    EXPECT_EQ(exit_code(st), 0) << said;
    EXPECT_EQ(access("/dev/shm/kvmgpu-test", F_OK), -1) << "the worker's /dev/shm is its own";
}

// Two VMs in one process, each with its own sandboxed worker. A's worker
// makes a call outside the table: it dies of SIGSYS, the VMM logs one line
// naming the sandbox and replaces it; B's worker, handles and data are untouched.
TEST(WorkerSandbox, DeniedCallKillsOnlyThatWorkerAndTheVmmReplacesIt) {
    WorkerFaults& faults = shared_faults();
    WorkerVgpu a(WorkerOptions{}, kSandboxed, faulty_factory(faults));
    WorkerVgpu b(WorkerOptions{}, kSandboxed);
    ASSERT_EQ(a.rig.enable(), VGPU_SUCCESS);
    ASSERT_EQ(b.rig.enable(), VGPU_SUCCESS);
    EXPECT_NE(a.worker->describe().find("sandboxed"), std::string::npos) << a.worker->describe();
    const uint64_t db = b.rig.alloc(4096);
    ASSERT_NE(db, 0u);
    ASSERT_EQ(b.rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {db, 0x5a, 4096, 0}}).status, VGPU_SUCCESS);
    const pid_t a_pid = a.worker->worker_pid(), b_pid = b.worker->worker_pid();

    faults.arm(WorkerFaults::DeniedCall);
    testing::internal::CaptureStderr();
    const uint32_t s = a.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status;
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(s, kWorkerDied);
    EXPECT_NE(log.find("killed by SIGSYS: it made a system call its sandbox denies"), std::string::npos) << log;
    EXPECT_NE(a.worker->worker_pid(), a_pid);
    EXPECT_EQ(a.worker->replacements(), 1u);
    EXPECT_EQ(a.rig.dev->counters().recoveries, 1u);
    // The replacement is sandboxed too, and works.
    EXPECT_NE(a.worker->describe().find("sandboxed"), std::string::npos) << a.worker->describe();
    const uint64_t da = a.rig.alloc(4096);
    EXPECT_NE(da, 0u);
    EXPECT_EQ(a.rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {da, 1, 4096, 0}}).status, VGPU_SUCCESS);

    // B went on: same worker, same allocation, its bytes intact.
    EXPECT_EQ(b.worker->worker_pid(), b_pid);
    EXPECT_EQ(b.worker->replacements(), 0u);
    ASSERT_EQ(b.rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, db, 4096, 0}}).status, VGPU_SUCCESS);
    uint8_t got[4096];
    b.rig.get(kDataGpa, got, sizeof got);
    EXPECT_EQ(got[0], 0x5a);
    EXPECT_EQ(got[4095], 0x5a);
}

// The same call without the sandbox does no harm: the filter is what kills.
TEST(WorkerSandbox, OffTheSameCallIsHarmless) {
    WorkerFaults& faults = shared_faults();
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{.worker_sandbox = false}, faulty_factory(faults));
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(w.worker->describe().find("sandboxed"), std::string::npos) << w.worker->describe();
    const pid_t pid = w.worker->worker_pid();
    faults.arm(WorkerFaults::DeniedCall);
    EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
    EXPECT_EQ(w.worker->worker_pid(), pid);
}

std::string read_all(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Recording replaces the filter: the denied call is counted and labelled,
// and the worker lives on; the file is complete after the worker's exit.
TEST(SyscallRecorder, CountsEachCallByPhaseAndVerdict) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kvmgpu-rec-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    setenv(kWorkerSyscallLogEnv, dir.c_str(), 1); // the workers started below are handed it
    pid_t pid;
    {
        WorkerFaults& faults = shared_faults();
        WorkerVgpu w(WorkerOptions{}, kSandboxed, faulty_factory(faults));
        unsetenv(kWorkerSyscallLogEnv);
        ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
        EXPECT_NE(w.worker->describe().find("recording its system calls"), std::string::npos) << w.worker->describe();
        pid = w.worker->worker_pid();
        ASSERT_NE(w.rig.alloc(4096), 0u);
        faults.arm(WorkerFaults::DeniedCall);
        EXPECT_EQ(w.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
        EXPECT_EQ(w.worker->worker_pid(), pid);
    } // Quit: the worker's exit_group writes the file
    unsetenv(kWorkerSyscallLogEnv);
    const std::string text = read_all(dir / ("worker-" + std::to_string(pid) + ".txt"));
    std::filesystem::remove_all(dir);
    EXPECT_NE(text.find("\nbefore "), std::string::npos) << text;
    EXPECT_NE(text.find("\nafter " + std::to_string(SYS_socket) + " socket DENIED 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nafter " + std::to_string(SYS_exit_group) + " exit_group allowed 1\n"), std::string::npos)
        << text;
}

} // namespace
} // namespace kvmgpu::vgpu::test
