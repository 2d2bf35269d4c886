// The vCPU seccomp filter under KVM: guests run with VmOptions.seccomp on,
// each in a forked child (the filter is irreversible for the thread that
// runs the vCPU, and gtest's own thread must never be confined). The child
// builds the VM, runs it, reports how the run ended through a pipe, and
// then, when asked, makes a forbidden syscall on the same, confined, thread.
//
// Built so it cannot fail spuriously: the forbidden call comes after the
// report, so a failing guest and a killed thread are told apart; a control
// run without the filter makes the same call and must survive it; the
// parent waits with a deadline and kills a stuck child.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "tests/kvm/kvm_fixture.h"
#include "tests/support/tiny_elf.h"

namespace kvmgpu::test {
namespace {

struct ChildOutcome {
    char report = '?'; // P passed, F failed, T timed out (as asked), X threw, ? nothing written
    int status = 0;    // waitpid status
};

class SeccompGuest : public KvmTest {
protected:
    // then_forbidden: after reporting, open() a file on the vCPU thread.
    ChildOutcome run_in_child(VmOptions o, bool then_forbidden, bool expect_timeout = false) {
        int p[2];
        EXPECT_EQ(pipe(p), 0);
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            const rlimit no_core{0, 0}; // SIGSYS dumps core by default
            setrlimit(RLIMIT_CORE, &no_core);
            o.console = [](std::string_view) {};
            char report = 'X';
            try {
                // Never destroyed: tearing a VM down closes fds and unmaps
                // RAM, which the confined thread may not do (the CLI runs the
                // vCPU on a thread of its own and tears down elsewhere).
                auto* kvm = new KvmSystem;
                auto* vm = new VirtualMachine(*kvm, o);
                const RunResult r = vm->run(); // confines this thread first
                report = expect_timeout ? (r.outcome == RunOutcome::Timeout ? 'T' : 'F') : (r.passed() ? 'P' : 'F');
            } catch (...) {
            }
            if (write(p[1], &report, 1) != 1) _exit(3);
            if (then_forbidden) {
                const int fd = open("/proc/self/status", O_RDONLY);
                _exit(fd >= 0 ? 100 : 101);
            }
            _exit(0);
        }
        close(p[1]);
        ChildOutcome out;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
        while (waitpid(pid, &out.status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                kill(pid, SIGKILL);
                waitpid(pid, &out.status, 0);
                ADD_FAILURE() << "child still running after 240 s: killed";
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (read(p[0], &out.report, 1) != 1) out.report = '?';
        close(p[0]);
        return out;
    }

    VmOptions hello(bool seccomp) {
        const std::string image = guest_image("hello");
        auto o = quiet_options(image);
        o.ram_bytes = 128ull << 20;
        o.timeout_s = 120;
        o.seccomp = seccomp;
        return o;
    }
};

std::string describe(int st) {
    if (WIFEXITED(st)) return "exited " + std::to_string(WEXITSTATUS(st));
    if (WIFSIGNALED(st)) return std::string("killed by ") + strsignal(WTERMSIG(st));
    return "status " + std::to_string(st);
}

TEST_F(SeccompGuest, HelloPassesWithTheVcpuThreadConfined) {
    if (!std::filesystem::exists(guest_image("hello"))) GTEST_SKIP() << "hello guest not built";
    const ChildOutcome c = run_in_child(hello(true), false);
    EXPECT_EQ(c.report, 'P') << describe(c.status);
    EXPECT_TRUE(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) << describe(c.status);
}

TEST_F(SeccompGuest, ForbiddenSyscallOnTheConfinedThreadIsSigsys) {
    if (!std::filesystem::exists(guest_image("hello"))) GTEST_SKIP() << "hello guest not built";
    const ChildOutcome c = run_in_child(hello(true), true);
    EXPECT_EQ(c.report, 'P') << describe(c.status); // the guest ran fine first
    EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGSYS) << describe(c.status);
    // Control: without the filter the same call is allowed.
    const ChildOutcome free_run = run_in_child(hello(false), true);
    EXPECT_EQ(free_run.report, 'P') << describe(free_run.status);
    EXPECT_TRUE(WIFEXITED(free_run.status) && WEXITSTATUS(free_run.status) == 100) << describe(free_run.status);
}

TEST_F(SeccompGuest, WatchdogTimeoutWorksUnderTheFilter) {
    // The watchdog's signal, KVM_RUN's EINTR and the register dump all pass.
    const auto path = write_temp_image(tiny_elf(code::spin), "seccomp-spin");
    auto o = quiet_options(path);
    o.timeout_s = 1;
    o.seccomp = true;
    const ChildOutcome c = run_in_child(o, false, /*expect_timeout=*/true);
    std::remove(path.c_str());
    EXPECT_EQ(c.report, 'T') << describe(c.status);
    EXPECT_TRUE(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) << describe(c.status);
}

} // namespace
} // namespace kvmgpu::test
