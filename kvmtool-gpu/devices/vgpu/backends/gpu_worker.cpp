// The worker's side of the protocol: unpack each request, call the backend,
// pack the reply. Everything read from the data area is bounds-checked
// against the channel (the VMM is trusted, but a bug there must not turn
// into a stray access here).
#include "kvmtool-gpu/devices/vgpu/backends/gpu_worker.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <exception>
#include <type_traits>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/shared_pieces.h"
#include "kvmtool-gpu/devices/vgpu/backends/sg_walk.h"

namespace kvmgpu::vgpu {

namespace {

static_assert(std::is_trivially_copyable_v<memmap::HostRun> && std::is_trivially_copyable_v<SharedPiece>);

class Worker {
public:
    Worker(RpcChannel& ch, std::unique_ptr<GpuBackend> be) : ch_(ch), be_(std::move(be)) {}
    // Fills ch_.reply() for `q`. Returns false after Quit (backend destroyed).
    bool serve(const RpcRequest& q);
    bool hang_next() const { return hang_next_; }

private:
    RpcReply& r() { return ch_.reply(); }
    uint8_t* data() { return ch_.data(); }
    // Input of `bytes` in the data area, as the request says.
    bool input(const RpcRequest& q, uint64_t bytes) const { return q.in_bytes == bytes && bytes <= ch_.data_bytes(); }
    // The host side of a copy: the data area when staged, else the VMM's
    // pointer, which must lie in guest RAM registered here.
    uint8_t* host_side(const RpcRequest& q, uint64_t ptr, uint64_t bytes) {
        if (!(q.flags & kRpcStaged)) return in_guest_ram(ptr, bytes) ? reinterpret_cast<uint8_t*>(ptr) : nullptr;
        return bytes <= ch_.data_bytes() ? data() : nullptr;
    }
    // Defence in depth: the VMM checks every pointer it sends, and the
    // worker checks them again against the guest RAM it registered, so a
    // corrupted request is refused rather than followed.
    bool in_guest_ram(uint64_t ptr, uint64_t bytes) const {
        uint64_t end;
        if (__builtin_add_overflow(ptr, bytes, &end)) return false;
        for (const auto& [base, size] : ram_)
            if (ptr >= base && end <= base + size) return true;
        return false;
    }
    std::span<const memmap::HostRun> runs(const RpcRequest& q) {
        const uint64_t n = q.arg[1];
        if (n > ch_.data_bytes() / sizeof(memmap::HostRun) || !input(q, n * sizeof(memmap::HostRun))) return {};
        // The VMM copied HostRun objects' bytes here (trivially copyable).
        const std::span<const memmap::HostRun> list{reinterpret_cast<const memmap::HostRun*>(data()), n};
        for (const auto& run : list)
            if (!in_guest_ram(reinterpret_cast<uint64_t>(run.host), run.len)) return {};
        return list;
    }
    void info();
    Status register_ram(const RpcRequest& q);
    Status launch(const RpcRequest& q);
    Status sg(const RpcRequest& q, bool htod);
    Status get_function(const RpcRequest& q);
    Status sg_walk(const RpcRequest& q);

    RpcChannel& ch_;
    std::unique_ptr<GpuBackend> be_;
    bool hang_next_ = false;
    std::vector<std::pair<uint64_t, uint64_t>> ram_; // registered guest RAM: host base, bytes
};

void Worker::info() {
    r().out[0] = be_->id();
    r().out[1] = be_->real_kernels();
    r().out[2] = static_cast<uint64_t>(be_->default_sg_strategy());
    r().out[3] = be_->register_ns();
    const std::string d = be_->describe();
    r().out_bytes = std::min<uint64_t>(d.size(), ch_.data_bytes());
    std::memcpy(data(), d.data(), r().out_bytes);
}

Status Worker::register_ram(const RpcRequest& q) {
    auto* host = reinterpret_cast<uint8_t*>(q.arg[0]);
    const uint64_t bytes = q.arg[1], n = q.arg[2];
    if (n == 0 || n > ch_.data_bytes() / sizeof(SharedPiece) || !input(q, n * sizeof(SharedPiece)))
        return VGPU_ERROR_INVALID_VALUE;
    std::vector<SharedPiece> theirs(n);
    std::memcpy(theirs.data(), data(), n * sizeof(SharedPiece));
    // Same objects at the same offsets: the same pages, not a snapshot.
    const auto mine = shared_pieces(host, bytes);
    if (!mine || *mine != theirs) return VGPU_ERROR_NOT_SUPPORTED;
    r().out[0] = 1;
    const Status st = be_->register_guest_ram(host, bytes);
    if (st == VGPU_SUCCESS) ram_.emplace_back(reinterpret_cast<uint64_t>(host), bytes);
    r().out[1] = be_->guest_ram_device_address(host);
    return st;
}

Status Worker::launch(const RpcRequest& q) {
    const uint64_t n = q.arg[6];
    auto lo = [](uint64_t v) { return static_cast<uint32_t>(v); };
    auto hi = [](uint64_t v) { return static_cast<uint32_t>(v >> 32); };
    const uint64_t cap = std::min<uint64_t>(q.in_bytes, ch_.data_bytes());
    uint64_t at = (n * sizeof(uint16_t) + 15) & ~uint64_t{15};
    if (n > ch_.data_bytes() / 16 || at > cap) return VGPU_ERROR_INVALID_VALUE;
    std::vector<uint16_t> sizes(n);
    std::vector<void*> params(n);
    if (n) std::memcpy(sizes.data(), data(), n * sizeof(uint16_t));
    for (uint64_t i = 0; i < n; ++i) {
        if (sizes[i] > cap - at) return VGPU_ERROR_INVALID_VALUE;
        params[i] = data() + at;
        at = (at + sizes[i] + 15) & ~uint64_t{15};
    }
    return be_->launch(q.arg[0], Dim3{lo(q.arg[1]), hi(q.arg[1]), lo(q.arg[2])},
                       Dim3{hi(q.arg[2]), lo(q.arg[3]), hi(q.arg[3])}, static_cast<uint32_t>(q.arg[4]), q.arg[5], params,
                       sizes);
}

// Reply: out[0] the function, out[1] its parameter count; data: that many
// (offset, size) uint32 pairs.
Status Worker::get_function(const RpcRequest& q) {
    if (!input(q, q.arg[1])) return VGPU_ERROR_INVALID_VALUE;
    ParamLayout layout;
    const Status st =
        be_->module_get_function(q.arg[0], {reinterpret_cast<const char*>(data()), q.arg[1]}, &r().out[0], &layout);
    if (st != VGPU_SUCCESS) return st;
    const uint64_t bytes = uint64_t{layout.count()} * 2 * sizeof(uint32_t);
    if (bytes > ch_.data_bytes()) return VGPU_ERROR_INVALID_VALUE;
    for (uint32_t i = 0; i < layout.count(); ++i) {
        const uint32_t pair[2] = {layout.offsets[i], layout.sizes[i]};
        std::memcpy(data() + i * sizeof pair, pair, sizeof pair);
    }
    r().out[1] = layout.count();
    r().out_bytes = bytes;
    return VGPU_SUCCESS;
}

Status Worker::sg(const RpcRequest& q, bool htod) {
    const auto list = runs(q);
    if (list.empty() || q.arg[2] >= static_cast<uint64_t>(SgStrategy::DeviceWalk)) return VGPU_ERROR_INVALID_VALUE;
    const auto how = static_cast<SgStrategy>(q.arg[2]);
    return htod ? be_->memcpy_htod_sg(q.arg[0], list, how, q.arg[3], q.arg[4] != 0)
                : be_->memcpy_dtoh_sg(q.arg[0], list, how, q.arg[3], q.arg[4] != 0);
}

Status Worker::sg_walk(const RpcRequest& q) {
    const uint64_t n = q.arg[7];
    if (n > KVMGPU_WALK_MAX_WINDOWS || q.in_bytes != n * sizeof(RamRegion)) return VGPU_ERROR_INVALID_VALUE;
    RamRegion ram[KVMGPU_WALK_MAX_WINDOWS];
    if (n) std::memcpy(ram, data(), n * sizeof(RamRegion));
    // The list and every window the walk may read must be registered guest RAM.
    const uint64_t count = q.arg[3];
    if (count == 0 || count > VGPU_MAX_SG_ENTRIES || !in_guest_ram(q.arg[2], count * sizeof(vgpu_sg_entry)))
        return VGPU_ERROR_INVALID_VALUE;
    for (uint64_t i = 0; i < n; ++i)
        if (!in_guest_ram(reinterpret_cast<uint64_t>(ram[i].host), ram[i].bytes)) return VGPU_ERROR_INVALID_VALUE;
    const SgWalk w{reinterpret_cast<const void*>(q.arg[2]), q.arg[3], q.arg[4], std::span<const RamRegion>(ram, n)};
    return be_->memcpy_sg_walk(q.arg[0] != 0, q.arg[1], w, q.arg[5], q.arg[6] != 0);
}

bool Worker::serve(const RpcRequest& q) {
    r() = RpcReply{};
    Status st = VGPU_SUCCESS;
    const uint64_t* a = q.arg;
    switch (static_cast<RpcOp>(q.op)) {
    case RpcOp::Info: info(); break;
    case RpcOp::RegisterGuestRam: st = register_ram(q); break;
    case RpcOp::GuestRamDeviceAddress: r().out[0] = be_->guest_ram_device_address(reinterpret_cast<void*>(a[0])); break;
    case RpcOp::DeviceCount: {
        int n = 0;
        st = be_->device_count(&n);
        r().out[0] = static_cast<uint64_t>(n);
        break;
    }
    case RpcOp::DeviceAttribute: {
        int v = 0;
        st = be_->device_attribute(static_cast<int>(a[0]), static_cast<int>(a[1]), &v);
        r().out[0] = static_cast<uint64_t>(static_cast<int64_t>(v));
        break;
    }
    case RpcOp::DeviceName:
        if (a[1] == 0 || a[1] > ch_.data_bytes()) {
            st = VGPU_ERROR_INVALID_VALUE;
            break;
        }
        st = be_->device_name(static_cast<int>(a[0]), reinterpret_cast<char*>(data()), a[1]);
        r().out_bytes = a[1];
        break;
    case RpcOp::DeviceTotalMem: st = be_->device_total_mem(static_cast<int>(a[0]), &r().out[0]); break;
    case RpcOp::CtxSynchronize: st = be_->ctx_synchronize(); break;
    case RpcOp::MemAlloc: st = be_->mem_alloc(a[0], &r().out[0]); break;
    case RpcOp::MemFree: st = be_->mem_free(a[0]); break;
    case RpcOp::MemGetInfo: st = be_->mem_get_info(&r().out[0], &r().out[1]); break;
    case RpcOp::MemcpyHtoD: {
        const uint8_t* src = host_side(q, a[1], a[2]);
        st = src && (!(q.flags & kRpcStaged) || input(q, a[2])) ? be_->memcpy_htod(a[0], src, a[2], a[3], a[4] != 0)
                                                               : VGPU_ERROR_INVALID_VALUE;
        break;
    }
    case RpcOp::MemcpyDtoH: {
        uint8_t* dst = host_side(q, a[0], a[2]);
        st = dst ? be_->memcpy_dtoh(dst, a[1], a[2], a[3], a[4] != 0) : VGPU_ERROR_INVALID_VALUE;
        if (q.flags & kRpcStaged) r().out_bytes = a[2];
        break;
    }
    case RpcOp::MemcpyDtoD: st = be_->memcpy_dtod(a[0], a[1], a[2], a[3], a[4] != 0); break;
    case RpcOp::MemcpyHtoDSg: st = sg(q, true); break;
    case RpcOp::MemcpyDtoHSg: st = sg(q, false); break;
    case RpcOp::MemcpySgWalk: st = sg_walk(q); break;
    case RpcOp::MemsetD8: st = be_->memset_d8(a[0], static_cast<uint8_t>(a[1]), a[2], a[3], a[4] != 0); break;
    case RpcOp::MemsetD32: st = be_->memset_d32(a[0], static_cast<uint32_t>(a[1]), a[2], a[3], a[4] != 0); break;
    case RpcOp::ModuleLoad:
        // The image and the NUL the backend may read after it.
        if (a[0] >= ch_.data_bytes() || !input(q, a[0] + 1) || data()[a[0]] != 0) {
            st = VGPU_ERROR_INVALID_VALUE;
            break;
        }
        st = be_->module_load({data(), a[0]}, &r().out[0]);
        break;
    case RpcOp::ModuleUnload: st = be_->module_unload(a[0]); break;
    case RpcOp::ModuleGetFunction: st = get_function(q); break;
    case RpcOp::Launch: st = launch(q); break;
    case RpcOp::StreamCreate: st = be_->stream_create(static_cast<uint32_t>(a[0]), &r().out[0]); break;
    case RpcOp::StreamSynchronize: st = be_->stream_synchronize(a[0]); break;
    case RpcOp::StreamDestroy: st = be_->stream_destroy(a[0]); break;
    case RpcOp::EventCreate: st = be_->event_create(static_cast<uint32_t>(a[0]), &r().out[0]); break;
    case RpcOp::EventRecord: st = be_->event_record(a[0], a[1]); break;
    case RpcOp::EventSynchronize: st = be_->event_synchronize(a[0]); break;
    case RpcOp::EventElapsedMs: {
        float ms = 0;
        st = be_->event_elapsed_ms(a[0], a[1], &ms);
        uint32_t bits;
        std::memcpy(&bits, &ms, sizeof bits);
        r().out[0] = bits;
        break;
    }
    case RpcOp::EventDestroy: st = be_->event_destroy(a[0]); break;
    case RpcOp::RecoverFrom: {
        const bool recovered = be_->recover_from(static_cast<Status>(a[0]));
        r().out[0] = recovered;
        // A backend that recovered in place must work again; one that could
        // not (CUDA after an illegal address) is replaced by the VMM.
        r().out[1] = !recovered || be_->ctx_synchronize() == VGPU_SUCCESS;
        break;
    }
    case RpcOp::InjectFault:
        if (a[0] == static_cast<uint64_t>(WorkerFault::Crash)) raise(SIGKILL);
        hang_next_ = a[0] == static_cast<uint64_t>(WorkerFault::HangNextCall);
        break;
    case RpcOp::Quit:
        be_.reset();
        return false;
    default: st = VGPU_ERROR_NOT_SUPPORTED; break;
    }
    r().status = st;
    return true;
}

} // namespace

void run_gpu_worker(RpcChannel& ch, const BackendFactory& make, pid_t parent) {
    // Nothing of the VMM's (KVM, eventfds, sockets) stays open here.
    close_range(3, ~0u, 0);
    prctl(PR_SET_NAME, "vgpu-worker");
    std::string why;
    std::unique_ptr<GpuBackend> be;
    try {
        be = make(&why);
    } catch (const std::exception& e) {
        why = e.what();
    }
    if (!be && why.empty()) why = "the backend factory returned nothing";
    const bool have_backend = be != nullptr;
    if (be) be->bind_thread();
    Worker w(ch, std::move(be));
    bool running = true;
    while (running && ch.wait_request(parent)) {
        if (w.hang_next())
            for (;;) pause(); // test fault: the VMM must give up on us and kill us
        const RpcRequest q = ch.request();
        if (!have_backend) {
            // No backend: answer the first request (Info) with the reason, and go.
            ch.reply() = RpcReply{.status = VGPU_ERROR_NO_DEVICE};
            ch.reply().out_bytes = std::min<uint64_t>(why.size(), ch.data_bytes());
            std::memcpy(ch.data(), why.data(), ch.reply().out_bytes);
            ch.post_reply();
            break;
        }
        running = w.serve(q);
        ch.post_reply();
    }
    _exit(0); // no atexit handlers, no static destructors: they belong to the VMM
}

} // namespace kvmgpu::vgpu
