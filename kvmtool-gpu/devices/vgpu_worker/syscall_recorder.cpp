#include "kvmtool-gpu/devices/vgpu_worker/syscall_recorder.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include "kvmtool-gpu/devices/vgpu_worker/worker_sandbox.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_syscalls.h"
#include "kvmtool-gpu/util/seccomp_bpf.h"
#include "kvmtool-gpu/util/syscall_names.h"

namespace kvmgpu::vgpu {

namespace {
constexpr int kNumbers = 512;  // x86-64 numbers reach ~460; anything above is counted as the last
constexpr int kVerdicts = 3;   // Verdict's values
constexpr int kPaths = 256;
constexpr size_t kPathBytes = 256;
constexpr size_t kFileBytes = 256 << 10;
const char* const kPhase[2] = {"before", "after"};

// Text into a fixed buffer: the recorder allocates nothing once running,
// because a thread it is holding in a call may hold the allocator's lock.
struct Text {
    char* buf;
    size_t cap, n = 0;
    void put(const char* s) {
        while (*s && n < cap) buf[n++] = *s++;
    }
    void put(uint64_t v) {
        char d[24];
        int i = 0;
        do d[i++] = static_cast<char>('0' + v % 10); while ((v /= 10) && i < 24);
        while (i && n < cap) buf[n++] = d[--i];
    }
};
} // namespace

struct SyscallRecorder::State {
    std::string dir; // set before the thread starts; only read after
    pid_t self = 0;
    std::atomic<int> listener{-1};
    std::atomic<int> phase{0};
    uint64_t counts[2][kNumbers][kVerdicts] = {};
    char paths[kPaths][kPathBytes] = {};
    int npaths = 0;
    char file[kFileBytes];
    char tmp_name[4096], final_name[4096];
    uint64_t last_write_ns = 0;
    seccomp_notif_sizes sizes{};
    alignas(8) unsigned char req_buf[1024] = {};
    alignas(8) unsigned char resp_buf[1024] = {};

    void run();
    void keep_path(pid_t pid, uint64_t addr);
    void write_file();
};

namespace {
uint64_t mono_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
} // namespace

void SyscallRecorder::State::keep_path(pid_t pid, uint64_t addr) {
    if (npaths >= kPaths) return;
    char got[kPathBytes] = {};
    iovec local{got, kPathBytes - 1}, remote{reinterpret_cast<void*>(addr), kPathBytes - 1};
    // Page-crossing reads may come back short; whatever came is kept.
    if (syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0) <= 0) return;
    for (int i = 0; i < npaths; ++i)
        if (std::strcmp(paths[i], got) == 0) return;
    std::memcpy(paths[npaths++], got, kPathBytes);
}

void SyscallRecorder::State::write_file() {
    Text t{file, kFileBytes};
    t.put("# GPU worker "), t.put(uint64_t(self)),
        t.put(" system calls: phase number name verdict count (before: fork to backend start; after: from then "
              "on; verdict: what the sandbox's table would do, opens for writing as this worker's sandbox confined them)\n");
    for (int ph = 0; ph < 2; ++ph)
        for (int nr = 0; nr < kNumbers; ++nr)
            for (int v = 0; v < kVerdicts; ++v) {
                if (!counts[ph][nr][v]) continue;
                const char* name = known_syscall_name(nr);
                t.put(kPhase[ph]), t.put(" "), t.put(uint64_t(nr)), t.put(" "), t.put(name ? name : "?"), t.put(" "),
                    t.put(to_string(static_cast<Verdict>(v))), t.put(" "), t.put(counts[ph][nr][v]), t.put("\n");
            }
    for (int i = 0; i < npaths; ++i) t.put("path-after "), t.put(paths[i]), t.put("\n");
    const int fd = ::open(tmp_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const bool ok = ::write(fd, file, t.n) == static_cast<ssize_t>(t.n);
    ::close(fd);
    if (ok) ::rename(tmp_name, final_name);
    last_write_ns = mono_ns();
}

void SyscallRecorder::State::run() {
    int fd;
    while ((fd = listener.load(std::memory_order_acquire)) < 0) {
        const timespec ms{0, 1'000'000};
        nanosleep(&ms, nullptr);
    }
    auto* req = reinterpret_cast<seccomp_notif*>(req_buf);
    auto* resp = reinterpret_cast<seccomp_notif_resp*>(resp_buf);
    for (;;) {
        std::memset(req_buf, 0, sizes.seccomp_notif);
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
            if (errno == EINTR || errno == ENOENT) continue;
            return; // the listener is gone: so is every thread it watched
        }
        const int nr = req->data.nr < 0 || req->data.nr >= kNumbers ? kNumbers - 1 : req->data.nr;
        const int ph = phase.load(std::memory_order_acquire);
        uint64_t args[6];
        std::memcpy(args, req->data.args, sizeof args);
        const auto v = static_cast<int>(worker_verdict(req->data.nr, args, self, worker_writable_opens_confined()));
        const bool first = counts[ph][nr][v]++ == 0;
        if (ph == 1 && req->data.nr == SYS_openat) keep_path(static_cast<pid_t>(req->pid), args[1]);
        // The worker's last call: the file must be complete before it runs.
        if (req->data.nr == SYS_exit_group || first || mono_ns() - last_write_ns > 1'000'000'000) write_file();
        std::memset(resp_buf, 0, sizes.seccomp_notif_resp);
        resp->id = req->id;
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp); // ENOENT: the call was interrupted; it comes again
    }
}

SyscallRecorder* SyscallRecorder::start(const std::string& dir, std::string* why) {
    auto* st = new State;
    st->dir = dir;
    st->self = getpid();
    std::snprintf(st->final_name, sizeof st->final_name, "%s/worker-%d.txt", dir.c_str(), st->self);
    std::snprintf(st->tmp_name, sizeof st->tmp_name, "%s/.worker-%d.tmp", dir.c_str(), st->self);
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &st->sizes) != 0 ||
        st->sizes.seccomp_notif > sizeof st->req_buf || st->sizes.seccomp_notif_resp > sizeof st->resp_buf) {
        *why = std::string("syscall recorder: no seccomp user notification here (") + std::strerror(errno) + ")";
        delete st;
        return nullptr;
    }
    // Before the filter, so this thread is not under it.
    std::thread(&State::run, st).detach();
    seccomp::Program p;
    try {
        st->listener.store(seccomp::install(p.finish(SECCOMP_RET_USER_NOTIF), SECCOMP_FILTER_FLAG_NEW_LISTENER,
                                            "syscall recorder"),
                           std::memory_order_release);
    } catch (const std::exception& e) {
        *why = e.what(); // the thread waits for a listener that never comes; the worker goes on unrecorded
        return nullptr;
    }
    auto* r = new SyscallRecorder;
    r->s_ = st;
    return r;
}

void SyscallRecorder::backend_started() { s_->phase.store(1, std::memory_order_release); }

} // namespace kvmgpu::vgpu
