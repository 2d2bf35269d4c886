// WorkerChannel: the shared mapping, and the spin-then-futex hand-offs of
// requests and replies between the VMM and a GPU worker.
#include "kvmtool-gpu/devices/vgpu_worker/worker_channel.h"

#include "kvmtool-gpu/util/spin.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <stdexcept>
#include <system_error>

namespace kvmgpu::vgpu {

// Lives at the start of the shared mapping; each sequence word and its
// "sleeping" flag share a cache line, away from the other side's.
struct WorkerChannel::Shared {
    alignas(64) std::atomic<uint32_t> request_seq{0}; // futex word the worker sleeps on
    std::atomic<uint32_t> worker_sleeps{0};
    alignas(64) std::atomic<uint32_t> reply_seq{0};   // futex word the VMM sleeps on
    std::atomic<uint32_t> vmm_sleeps{0};
    alignas(64) WorkerRequest req{};
    alignas(64) WorkerReply rep{};
    alignas(64) RingState ring{};
};


namespace {
static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == 4,
              "futex words must be plain 32-bit integers");
constexpr uint64_t kPage = 4096;
constexpr std::chrono::milliseconds kVmmSlice{5};   // liveness check period while the VMM sleeps
constexpr std::chrono::seconds kWorkerSlice{1};     // parent check period while the worker sleeps

uint32_t* word(std::atomic<uint32_t>& a) { return reinterpret_cast<uint32_t*>(&a); }

// Shared (not FUTEX_PRIVATE): the two processes map the word from one shmem
// object, each at its own address (the futex key is the object and offset).
void futex_wait(std::atomic<uint32_t>& a, uint32_t expected, std::chrono::nanoseconds rel) {
    timespec ts{static_cast<time_t>(rel.count() / 1'000'000'000), static_cast<long>(rel.count() % 1'000'000'000)};
    syscall(SYS_futex, word(a), FUTEX_WAIT, expected, &ts, nullptr, 0); // EAGAIN/ETIMEDOUT/EINTR: caller re-checks
}

void futex_wake(std::atomic<uint32_t>& a) { syscall(SYS_futex, word(a), FUTEX_WAKE, 1, nullptr, nullptr, 0); }

// Spins until pred() or spin_ns have passed; true if pred() held. After the
// first microseconds it yields between looks: when the peer is runnable on
// this CPU (a loaded or small host), spinning would only keep it waiting.
template <typename Pred>
bool spin_until(Pred pred, uint64_t spin_ns) {
    constexpr uint64_t kPureSpinNs = 2000;
    const uint64_t t0 = now_ns();
    bool yielding = false;
    for (uint32_t i = 1;; ++i) {
        if (pred()) return true;
        if (i % 32 == 0 || yielding) {
            const uint64_t spent = now_ns() - t0;
            if (spent >= spin_ns) return false;
            if (spent >= kPureSpinNs) {
                yielding = true;
                sched_yield();
                continue;
            }
        }
        cpu_relax();
    }
}
} // namespace

namespace {
uint64_t channel_bytes(uint64_t data_bytes) {
    if (data_bytes == 0 || data_bytes > (1ull << 40)) throw std::invalid_argument("WorkerChannel: data_bytes out of range");
    return 2 * kPage + (data_bytes + kPage - 1) / kPage * kPage;
}
} // namespace

std::unique_ptr<WorkerChannel> WorkerChannel::adopt(int fd, uint64_t data_bytes, uint32_t spin_us) {
    static_assert(sizeof(Shared) <= 2 * kPage);
    uint64_t map_bytes = 0;
    try {
        map_bytes = channel_bytes(data_bytes);
    } catch (...) {
        close(fd);
        throw;
    }
    void* p = memmap::map_received(fd, map_bytes, "the worker channel");
    return std::unique_ptr<WorkerChannel>(new WorkerChannel(static_cast<Shared*>(p), memmap::ForkShare{p, map_bytes, fd},
                                                            static_cast<uint8_t*>(p) + 2 * kPage, data_bytes,
                                                            uint64_t{spin_us} * 1000));
}

std::unique_ptr<WorkerChannel> WorkerChannel::create(uint64_t data_bytes, uint32_t spin_us) {
    static_assert(sizeof(Shared) <= 2 * kPage); // the header pages; the data area starts after them
    const uint64_t map_bytes = channel_bytes(data_bytes);
    const memmap::ForkShare share = memmap::create_unforked_shared("kvmgpu-worker-channel", map_bytes);
    auto* shared = new (share.addr) Shared;
    return std::unique_ptr<WorkerChannel>(new WorkerChannel(shared, share, static_cast<uint8_t*>(share.addr) + 2 * kPage,
                                                            data_bytes, uint64_t{spin_us} * 1000));
}

WorkerChannel::~WorkerChannel() { memmap::destroy_unforked_shared(share_); }

WorkerRequest& WorkerChannel::request() { return shared_->req; }
WorkerReply& WorkerChannel::reply() { return shared_->rep; }
RingState& WorkerChannel::ring_state() { return shared_->ring; }

bool WorkerChannel::request_pending() const {
    return shared_->request_seq.load(std::memory_order_acquire) != served_;
}

void WorkerChannel::post_request() {
    shared_->request_seq.store(++posted_, std::memory_order_seq_cst);
    if (shared_->worker_sleeps.load(std::memory_order_seq_cst)) futex_wake(shared_->request_seq);
}

WorkerChannel::Wait WorkerChannel::wait_reply(std::chrono::steady_clock::time_point deadline,
                                        const std::function<bool()>& alive) {
    const uint32_t want = posted_;
    auto done = [&] { return shared_->reply_seq.load(std::memory_order_acquire) == want; };
    if (spin_until(done, spin_ns_)) return Wait::Done;
    for (;;) {
        shared_->vmm_sleeps.store(1, std::memory_order_seq_cst);
        const uint32_t seen = shared_->reply_seq.load(std::memory_order_seq_cst);
        const auto now = std::chrono::steady_clock::now();
        if (seen != want && now < deadline)
            futex_wait(shared_->reply_seq, seen, std::min<std::chrono::nanoseconds>(kVmmSlice, deadline - now));
        shared_->vmm_sleeps.store(0, std::memory_order_relaxed);
        if (done()) return Wait::Done;
        if (!alive()) return Wait::PeerGone;
        if (std::chrono::steady_clock::now() >= deadline) return Wait::TimedOut;
    }
}

bool WorkerChannel::wait_request(pid_t parent) {
    const uint32_t last = served_;
    auto arrived = [&] { return shared_->request_seq.load(std::memory_order_acquire) != last; };
    if (!spin_until(arrived, spin_ns_)) {
        for (;;) {
            shared_->worker_sleeps.store(1, std::memory_order_seq_cst);
            if (shared_->request_seq.load(std::memory_order_seq_cst) == last)
                futex_wait(shared_->request_seq, last, kWorkerSlice);
            shared_->worker_sleeps.store(0, std::memory_order_relaxed);
            if (arrived()) break;
            if (getppid() != parent) return false;
        }
    }
    served_ = shared_->request_seq.load(std::memory_order_acquire);
    return true;
}

void WorkerChannel::post_reply() {
    shared_->reply_seq.store(served_, std::memory_order_seq_cst);
    if (shared_->vmm_sleeps.load(std::memory_order_seq_cst)) futex_wake(shared_->reply_seq);
}

} // namespace kvmgpu::vgpu
