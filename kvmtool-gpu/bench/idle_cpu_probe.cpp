#include "kvmtool-gpu/bench/idle_cpu_probe.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "kvmtool-gpu/util/clock.h"

namespace kvmgpu::bench {

namespace {
// utime + stime (clock ticks) and the parent pid from a /proc stat file;
// false if it cannot be read. The command name may hold spaces and
// parentheses: the fields start after the last ')'.
bool read_stat(const std::string& path, uint64_t* ticks, pid_t* ppid) {
    FILE* f = std::fopen(path.c_str(), "re");
    if (!f) return false;
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = 0;
    const char* p = std::strrchr(buf, ')');
    if (!p) return false;
    char state;
    long long pp;
    unsigned long long fields[11], ut, st;
    // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    if (std::sscanf(p + 1, " %c %lld %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &state, &pp,
                    &fields[0], &fields[1], &fields[2], &fields[3], &fields[4], &fields[5], &fields[6], &fields[7],
                    &fields[8], &ut, &st) != 13)
        return false;
    *ticks = ut + st;
    if (ppid) *ppid = static_cast<pid_t>(pp);
    return true;
}

template <class Each>
bool each_number(const char* dir, Each each) {
    DIR* d = opendir(dir);
    if (!d) return false;
    while (dirent* e = readdir(d)) {
        char* end;
        const long v = std::strtol(e->d_name, &end, 10);
        if (*end == 0 && v > 0) each(static_cast<pid_t>(v));
    }
    closedir(d);
    return true;
}
} // namespace

IdleCpuProbe::IdleCpuProbe(pid_t vcpu_tid) : vcpu_tid_(vcpu_tid) { thread_ = std::thread([this] { run(); }); }

IdleCpuProbe::~IdleCpuProbe() {
    {
        std::lock_guard lk(mu_);
        ask_ = Ask::Quit;
    }
    cv_.notify_all();
    thread_.join();
}

int64_t IdleCpuProbe::cpu_ns() const {
    const pid_t self = getpid();
    uint64_t ticks = 0;
    bool ok = each_number("/proc/self/task", [&](pid_t tid) {
        uint64_t t;
        if (tid != vcpu_tid_ && tid != own_tid_ && read_stat("/proc/self/task/" + std::to_string(tid) + "/stat", &t, nullptr))
            ticks += t;
    });
    ok = ok && each_number("/proc", [&](pid_t pid) {
        uint64_t t;
        pid_t parent = 0;
        if (read_stat("/proc/" + std::to_string(pid) + "/stat", &t, &parent) && parent == self) ticks += t;
    });
    if (!ok) return -1;
    return static_cast<int64_t>(ticks * (1'000'000'000ull / static_cast<uint64_t>(sysconf(_SC_CLK_TCK))));
}

void IdleCpuProbe::run() {
    own_tid_ = gettid();
    std::unique_lock lk(mu_);
    for (;;) {
        cv_.wait(lk, [&] { return ask_ != Ask::None; });
        if (ask_ == Ask::Quit) return;
        if (ask_ == Ask::Begin) {
            cpu0_ = cpu_ns();
            wall0_ = now_ns();
        } else {
            const int64_t cpu1 = cpu_ns();
            const uint64_t wall = now_ns() - wall0_;
            result_ = cpu0_ >= 0 && cpu1 >= 0 && wall > 0 ? static_cast<double>(cpu1 - cpu0_) / static_cast<double>(wall) : -1;
        }
        ask_ = Ask::None;
        cv_.notify_all();
    }
}

void IdleCpuProbe::begin() {
    std::unique_lock lk(mu_);
    ask_ = Ask::Begin;
    begun_ = true;
    cv_.notify_all();
    cv_.wait(lk, [&] { return ask_ == Ask::None; });
}

double IdleCpuProbe::end() {
    std::unique_lock lk(mu_);
    if (!begun_) return -1;
    begun_ = false;
    ask_ = Ask::End;
    cv_.notify_all();
    cv_.wait(lk, [&] { return ask_ == Ask::None; });
    return result_;
}

} // namespace kvmgpu::bench
