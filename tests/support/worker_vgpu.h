// A vGPU whose engine runs in a GPU worker process, on the host backend or
// on a test backend built on it, for the tests that need a worker.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_engine.h"
#include "tests/support/forwarding_backend.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {

inline DeviceBackends host_devices_for_worker(const std::string&, std::string*) {
    return make_host_backend(HostBackendOptions{.bounce_bytes = 8192});
}
inline BackendFactory host_factory() { return {&host_devices_for_worker, ""}; }

template <class Backend>
DeviceBackends make_test_backend(const std::string&, std::string*) {
    return std::make_unique<Backend>();
}
// A factory for a test backend that needs no arguments.
template <class Backend>
BackendFactory factory_of() {
    return {&make_test_backend<Backend>, ""};
}

// A VgpuRig on a WorkerEngine whose worker makes its backend with `make`;
// `worker` is that engine.
struct WorkerVgpu {
    WorkerEngine* worker = nullptr;
    VgpuRig rig;

    explicit WorkerVgpu(WorkerOptions wopts = {}, VgpuOptions opts = {}, const BackendFactory& make = host_factory())
        : rig(opts, [&](const memmap::GuestMemory& mem, const VgpuOptions& o) -> std::unique_ptr<CommandEngine> {
              std::string why;
              auto e = WorkerEngine::create(mem, make, o, wopts, &why);
              EXPECT_TRUE(e) << why;
              worker = e.get();
              return e;
          }) {
        rig.dev->ready_after_ns(); // the worker starts its backend in the background: wait for it
    }
};

// Waits (bounded, 10 s) until the engine's worker is not `old`: a worker
// the supervisor replaces at its next look. True once it is.
inline bool new_worker_within_bound(const WorkerEngine& e, pid_t old) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120); // a hang guard
    while (e.worker_pid() == old || e.worker_pid() <= 0) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

// A backend that, like CUDA on driver 580 after an illegal address, reports
// a sticky error (on any memset) and cannot make a new context in its
// process: the worker must be replaced, and the recovery counted once.
class UnrecoverableBackend final : public ForwardingBackend {
public:
    Status memset(uint64_t, uint32_t, uint32_t, uint64_t, BackendStream, bool) override {
        lost_ = true;
        return VGPU_ERROR_ILLEGAL_ADDRESS;
    }
    Status ctx_synchronize() override { return lost_ ? VGPU_ERROR_ILLEGAL_ADDRESS : inner().ctx_synchronize(); }
    bool recover_from(Status s) override { return s == VGPU_ERROR_ILLEGAL_ADDRESS; }

private:
    bool lost_ = false;
};

// A fault a test arms for whichever worker next synchronizes: in
// MAP_SHARED memory made before the worker zygote is forked (the one object,
// shared_faults(), is made before main), so a worker sees what the test
// process arms. Taken once: the worker that replaces a faulty one runs
// clean. This is the tests' seam for worker death and hangs; the production
// worker has no such message.
class WorkerFaults {
public:
    enum Fault : uint32_t {
        None,
        Crash, // SIGKILL at once, without completing the command or answering the request
        Hang,  // never returns: the VMM must give up on the worker and kill it
        DeniedCall, // socket(): a system call the sandbox's table leaves out (worker_syscalls.cpp)
    };
    WorkerFaults() {
        void* p = mmap(nullptr, sizeof(std::atomic<uint32_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("mmap of the shared fault word failed");
        next_ = new (p) std::atomic<uint32_t>(None);
    }
    ~WorkerFaults() { munmap(next_, sizeof *next_); }
    WorkerFaults(const WorkerFaults&) = delete;
    WorkerFaults& operator=(const WorkerFaults&) = delete;

    void arm(Fault f) { next_->store(f, std::memory_order_release); }
    Fault take() { return static_cast<Fault>(next_->exchange(None, std::memory_order_acq_rel)); }

private:
    std::atomic<uint32_t>* next_;
};

// The test process's one WorkerFaults, made during static initialisation;
// every test that arms a fault starts from None.
inline WorkerFaults g_shared_worker_faults;
inline WorkerFaults& shared_faults() {
    g_shared_worker_faults.arm(WorkerFaults::None);
    return g_shared_worker_faults;
}

// The host backend, but a synchronize (CTX_SYNCHRONIZE, or the one RESET
// makes before it frees a context's objects) commits the armed fault.
class FaultyBackend final : public ForwardingBackend {
public:
    FaultyBackend()
        : ForwardingBackend(make_host_backend(HostBackendOptions{.bounce_bytes = 8192})),
          faults_(g_shared_worker_faults) {}
    Status ctx_synchronize() override {
        switch (faults_.take()) {
        case WorkerFaults::Crash: raise(SIGKILL); break;
        case WorkerFaults::Hang:
            for (;;) pause();
        case WorkerFaults::DeniedCall:
            if (const long fd = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0); fd >= 0) close(static_cast<int>(fd));
            break;
        case WorkerFaults::None: break;
        }
        return inner().ctx_synchronize();
    }

private:
    WorkerFaults& faults_; // the worker's copy of the test's object: the same shared word
};

// `faults` must be shared_faults().
inline BackendFactory faulty_factory(WorkerFaults& faults) {
    EXPECT_EQ(&faults, &g_shared_worker_faults) << "a worker sees only the shared WorkerFaults";
    return factory_of<FaultyBackend>();
}

} // namespace kvmgpu::vgpu::test
