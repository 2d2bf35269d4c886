// Linux-ABI calls a guest serves itself with (linux-guests.sh runs one mode
// per VM). Usage: abi_check MODE.
//   events       pipe2, eventfd, poll, ppoll and epoll over pipes, eventfds
//                and the console; a blocked read and epoll_wait woken by
//                another thread; time-outs; /proc/self/fd listed and read
//   signals      handlers for SIGSEGV (on a sigaltstack), SIGILL, SIGTRAP,
//                SIGFPE: siginfo, every register and the SSE state back after
//                the handler returns; raise() and kill() of SIGUSR1
//   segv-default a SIGSEGV handler with SA_RESETHAND that returns: the fault
//                again, now without a handler, ends the run (faulthandler's way)
//   kill-default kill(getpid(), SIGTERM) without a handler ends the run
//   poll-forever poll on a pipe no one writes: only --timeout ends it
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <ucontext.h>
#include <unistd.h>

#include <string>

#include "guest_check.h"

static int pipe_w = -1;

static void* write_later(void*) {
    usleep(20000);
    write(pipe_w, "late", 4);
    return nullptr;
}

static int events() {
    int p[2];
    CHECK(pipe2(p, 0) == 0, "pipe2");
    CHECK(write(p[1], "abc", 3) == 3, "write to the pipe");
    char buf[16] = {};
    CHECK(read(p[0], buf, sizeof buf) == 3 && memcmp(buf, "abc", 3) == 0, "read from the pipe");
    // poll: the write end and stdout writable, the empty read end not readable (time-out 0).
    pollfd fds[3] = {{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}, {1, POLLOUT, 0}};
    CHECK(poll(fds, 3, 0) == 2 && fds[0].revents == 0 && fds[1].revents == POLLOUT, "poll: %d %d", fds[0].revents, fds[1].revents);
    CHECK(poll(fds, 1, 30) == 0, "poll time-out on an empty pipe");
    timespec ts{0, 10000000};
    CHECK(ppoll(fds, 1, &ts, nullptr) == 0, "ppoll time-out");
    // A blocking read woken by another thread's write.
    pipe_w = p[1];
    pthread_t t;
    pthread_create(&t, nullptr, write_later, nullptr);
    memset(buf, 0, sizeof buf);
    CHECK(read(p[0], buf, sizeof buf) == 4 && memcmp(buf, "late", 4) == 0, "blocked read woken: '%s'", buf);
    pthread_join(t, nullptr);
    // epoll: the pipe and an eventfd; a blocked epoll_wait woken by a write.
    const int efd = eventfd(0, EFD_NONBLOCK);
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 7;
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0, "epoll_ctl add pipe");
    ev.data.u64 = 9;
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) == 0, "epoll_ctl add eventfd");
    epoll_event got[4];
    CHECK(epoll_wait(ep, got, 4, 20) == 0, "epoll_wait time-out");
    pthread_create(&t, nullptr, write_later, nullptr);
    CHECK(epoll_wait(ep, got, 4, -1) == 1 && got[0].data.u64 == 7, "epoll_wait woken by the pipe");
    pthread_join(t, nullptr);
    read(p[0], buf, sizeof buf);
    uint64_t one = 1;
    CHECK(write(efd, &one, 8) == 8, "eventfd write");
    CHECK(epoll_wait(ep, got, 4, -1) == 1 && got[0].data.u64 == 9, "epoll_wait: the eventfd");
    uint64_t count = 0;
    CHECK(read(efd, &count, 8) == 8 && count == 1, "eventfd read");
    CHECK(read(efd, &count, 8) == -1 && errno == EAGAIN, "eventfd empty: EAGAIN");
    // /proc/self/fd: every descriptor open now, and what each is.
    std::string names;
    DIR* d = opendir("/proc/self/fd");
    CHECK(d != nullptr, "opendir /proc/self/fd");
    int listed = 0, open_now = 0;
    bool pipe_listed = false;
    while (dirent* e = d ? readdir(d) : nullptr)
        if (e->d_name[0] != '.') {
            ++listed;
            pipe_listed |= atoi(e->d_name) == p[0];
        }
    for (int fd = 0; fd < 1024; ++fd) open_now += fcntl(fd, F_GETFD) != -1;
    if (d) closedir(d);
    CHECK(listed == open_now && pipe_listed, "/proc/self/fd lists every open descriptor: %d of %d", listed, open_now);
    char link[64] = {};
    const std::string path = "/proc/self/fd/" + std::to_string(p[0]);
    CHECK(readlink(path.c_str(), link, sizeof link - 1) > 0 && strncmp(link, "pipe:[", 6) == 0, "readlink: '%s'", link);
    close(p[1]);
    CHECK(read(p[0], buf, sizeof buf) == 0, "end of file once the writer is closed");
    printf("events: %s\n", failures ? "FAILED" : "pipes, eventfds, poll and epoll ok");
    return failures;
}

static volatile int usr1_seen = 0, segv_seen = 0, ill_seen = 0, trap_seen = 0;
static volatile uint64_t segv_addr = 0, segv_rax = 0, segv_rdx = 0;
static volatile bool segv_on_altstack = false;
static char altstack[64 * 1024];
static sigjmp_buf fpe_jump;

static void on_usr1(int sig, siginfo_t* info, void*) {
    if (sig == SIGUSR1 && info->si_signo == SIGUSR1) ++usr1_seen;
}

static void on_segv(int, siginfo_t* info, void* uc_void) {
    auto* uc = static_cast<ucontext_t*>(uc_void);
    int here;
    segv_on_altstack = reinterpret_cast<char*>(&here) >= altstack && reinterpret_cast<char*>(&here) < altstack + sizeof altstack;
    segv_addr = reinterpret_cast<uint64_t>(info->si_addr);
    if (segv_addr != 16) { // not the planned fault: resuming at RCX would be nonsense
        printf("FAILED: an unplanned SIGSEGV at 0x%llx (code %d)\n", (unsigned long long)segv_addr, info->si_code);
        _exit(3);
    }
    segv_rax = uc->uc_mcontext.gregs[REG_RAX];
    segv_rdx = uc->uc_mcontext.gregs[REG_RDX];
    ++segv_seen;
    asm volatile("pxor %%xmm5, %%xmm5" ::: "xmm5"); // the interrupted code's XMM5 must come back
    uc->uc_mcontext.gregs[REG_RIP] = uc->uc_mcontext.gregs[REG_RCX]; // resume after the faulting load
}

static void on_ill(int, siginfo_t*, void* uc_void) {
    ++ill_seen;
    static_cast<ucontext_t*>(uc_void)->uc_mcontext.gregs[REG_RIP] += 2; // past ud2
}

static void on_trap(int, siginfo_t* info, void*) {
    if (info->si_signo == SIGTRAP) ++trap_seen; // RIP is already past int3
}

static void on_fpe(int, siginfo_t* info, void*) {
    if (info->si_code == FPE_INTDIV) siglongjmp(fpe_jump, 1);
}

static void install(int sig, void (*fn)(int, siginfo_t*, void*), int flags) {
    struct sigaction sa {};
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(sig, &sa, nullptr) == 0, "sigaction %d", sig);
}

static int signals() {
    install(SIGUSR1, on_usr1, 0);
    raise(SIGUSR1);
    CHECK(usr1_seen == 1, "raise(SIGUSR1) ran the handler: %d", usr1_seen);
    kill(getpid(), SIGUSR1);
    CHECK(usr1_seen == 2, "kill(getpid(), SIGUSR1) ran the handler: %d", usr1_seen);

    stack_t ss{};
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    CHECK(sigaltstack(&ss, nullptr) == 0, "sigaltstack");
    install(SIGSEGV, on_segv, SA_ONSTACK);
    // A load from address 16 (unmapped): the handler resumes at label 1 (RCX).
    uint64_t r12_after = 0, xmm5_after = 0;
    asm volatile("movq $0x5151, %%r12\n\t"
                 "movq $0x7777, %%rax\n\t"
                 "movq %%rax, %%xmm5\n\t"
                 "leaq 1f(%%rip), %%rcx\n\t"
                 "movq $0xd0d0, %%rdx\n\t"
                 "movq $16, %%rax\n\t"
                 "movq (%%rax), %%rax\n"
                 "1:\n\t"
                 "movq %%r12, %0\n\t"
                 "movq %%xmm5, %1"
                 : "=r"(r12_after), "=r"(xmm5_after)
                 :
                 : "rax", "rcx", "rdx", "r12", "xmm5", "memory");
    CHECK(segv_seen == 1, "SIGSEGV handler ran");
    CHECK(segv_addr == 16, "si_addr 16: 0x%llx", (unsigned long long)segv_addr);
    CHECK(segv_rax == 16 && segv_rdx == 0xd0d0, "the frame's RAX and RDX are the faulting code's: 0x%llx 0x%llx",
          (unsigned long long)segv_rax, (unsigned long long)segv_rdx);
    CHECK(segv_on_altstack, "the handler ran on the sigaltstack");
    CHECK(r12_after == 0x5151, "R12 back after the handler");
    CHECK(xmm5_after == 0x7777, "XMM5 back after the handler: 0x%llx", (unsigned long long)xmm5_after);

    install(SIGILL, on_ill, 0);
    asm volatile("ud2");
    CHECK(ill_seen == 1, "SIGILL handler ran for ud2");
    install(SIGTRAP, on_trap, 0);
    asm volatile("int3");
    CHECK(trap_seen == 1, "SIGTRAP handler ran for int3");
    install(SIGFPE, on_fpe, 0);
    volatile int zero = 0, fpe = 0;
    if (sigsetjmp(fpe_jump, 1) == 0) {
        fpe = 10 / zero;
        CHECK(false, "division by zero went on: %d", fpe);
    }
    // After siglongjmp out of a handler the process goes on, SIGFPE unblocked again.
    sigset_t now;
    sigprocmask(SIG_BLOCK, nullptr, &now);
    CHECK(!sigismember(&now, SIGFPE), "SIGFPE unblocked after siglongjmp");
    printf("signals: %s\n", failures ? "FAILED" : "handlers ran and the interrupted code went on");
    return failures;
}

static void on_segv_once(int) {
    printf("segv handler ran\n");
    fflush(stdout);
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IONBF, 0);
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "events") return events();
    if (mode == "signals") return signals();
    if (mode == "segv-default") {
        struct sigaction sa {};
        sa.sa_handler = on_segv_once;
        sa.sa_flags = SA_RESETHAND;
        sigaction(SIGSEGV, &sa, nullptr);
        *reinterpret_cast<volatile int*>(24) = 1;
        printf("FAILED: went on after the second fault\n");
        return 1;
    }
    if (mode == "kill-default") {
        kill(getpid(), SIGTERM);
        printf("FAILED: went on after SIGTERM\n");
        return 1;
    }
    if (mode == "poll-forever") {
        int p[2];
        pipe(p);
        pollfd f{p[0], POLLIN, 0};
        poll(&f, 1, -1);
        printf("FAILED: poll returned\n");
        return 1;
    }
    printf("usage: abi_check events|signals|segv-default|kill-default|poll-forever\n");
    return 2;
}
