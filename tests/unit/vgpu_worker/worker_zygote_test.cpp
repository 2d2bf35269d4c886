// Workers start from the zygote: each is the VMM's child, and none holds
// what the VMM came to hold after the zygote started (the first worker and
// a replacement alike), which a worker forked from the VMM would.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <random>
#include <sstream>
#include <string>

#include "kvmtool-gpu/devices/vgpu_worker/worker_zygote.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr size_t kSecretBytes = 64;

// What the last worker found at the secrets' addresses: in MAP_SHARED
// memory made before main, so before the zygote.
struct Findings {
    std::atomic<int> checked{0};
    std::atomic<int> found{0}; // secrets whose bytes the worker could read at the VMM's address
};
Findings* shared_findings() {
    static Findings* f = [] {
        void* p = mmap(nullptr, sizeof(Findings), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) std::abort();
        return new (p) Findings;
    }();
    return f;
}
Findings* const g_findings = shared_findings();

// In the worker: `arg` lists "address hex-bytes" per secret; each counts as
// found if this process reads those bytes at that address (through
// /proc/self/mem, so an unmapped address is an error, not a fault).
DeviceBackends make_backend_after_looking(const std::string& arg, std::string* why) {
    std::istringstream in(arg);
    const int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    int found = 0, checked = 0;
    for (std::string addr, hex; in >> addr >> hex; ++checked) {
        std::string want;
        for (size_t i = 0; i + 1 < hex.size(); i += 2) want += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
        std::string here(want.size(), '\0');
        const off_t at = static_cast<off_t>(std::stoull(addr, nullptr, 16));
        if (mem >= 0 && pread(mem, here.data(), here.size(), at) == static_cast<ssize_t>(here.size()) && here == want) ++found;
    }
    if (mem >= 0) close(mem);
    g_findings->found.store(found);
    g_findings->checked.store(checked);
    return host_devices_for_worker("", why);
}

std::string hex_of(const uint8_t* p, size_t n) {
    std::string s;
    char b[3];
    for (size_t i = 0; i < n; ++i) std::snprintf(b, sizeof b, "%02x", p[i]), s += b;
    return s;
}

// The parent pid of `pid`, from /proc/<pid>/stat.
pid_t parent_of(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(f, line);
    const size_t close_paren = line.rfind(')');
    if (close_paren == std::string::npos) return -1;
    std::istringstream rest(line.substr(close_paren + 2));
    char state;
    pid_t ppid = -1;
    rest >> state >> ppid;
    return ppid;
}

TEST(WorkerZygote, WorkersAreTheVmmsChildrenAndHoldNothingItMadeAfterTheZygote) {
    start_worker_zygote();
    const pid_t zygote = worker_zygote_pid();
    ASSERT_GT(zygote, 0);
    EXPECT_EQ(parent_of(zygote), getpid());

    // The VMM's later state: a small heap secret and a large mapping.
    std::mt19937_64 rng(std::random_device{}());
    auto* small = static_cast<uint8_t*>(std::malloc(kSecretBytes));
    const size_t big_bytes = 1 << 20;
    auto* big = static_cast<uint8_t*>(mmap(nullptr, big_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_TRUE(small && big != MAP_FAILED);
    for (size_t i = 0; i < kSecretBytes; ++i) small[i] = static_cast<uint8_t>(rng()), big[i] = static_cast<uint8_t>(rng());
    char line[64];
    std::string arg;
    for (const uint8_t* s : {static_cast<const uint8_t*>(small), static_cast<const uint8_t*>(big)}) {
        std::snprintf(line, sizeof line, "%lx ", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(s)));
        arg += line + hex_of(s, kSecretBytes) + " ";
    }
    g_findings->checked.store(-1);
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{}, BackendFactory{&make_backend_after_looking, arg});
    ASSERT_TRUE(w.worker);
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    ASSERT_EQ(g_findings->checked.load(), 2) << "the worker's factory did not run";
    EXPECT_EQ(g_findings->found.load(), 0) << "the worker holds memory the VMM filled after the zygote started";
    const pid_t first = w.worker->worker_pid();
    EXPECT_EQ(parent_of(first), getpid()) << "a worker is the VMM's child (CLONE_PARENT), not the zygote's";
    EXPECT_NE(first, zygote);

    // A replacement takes the same path.
    g_findings->checked.store(-1);
    kill(first, SIGKILL);
    ASSERT_EQ(w.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, kWorkerDied);
    ASSERT_TRUE(new_worker_within_bound(*w.worker, first));
    const pid_t second = w.worker->worker_pid();
    EXPECT_EQ(parent_of(second), getpid());
    ASSERT_EQ(w.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
    EXPECT_EQ(g_findings->checked.load(), 2);
    EXPECT_EQ(g_findings->found.load(), 0) << "the replacement holds the VMM's later memory";
    EXPECT_EQ(worker_zygote_pid(), zygote) << "one zygote for every worker of the process";
    std::free(small);
    munmap(big, big_bytes);
}

} // namespace
} // namespace kvmgpu::vgpu::test
