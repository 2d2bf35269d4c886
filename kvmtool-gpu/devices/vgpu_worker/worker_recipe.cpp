// A recipe's wire format (native byte order: both ends are one program) and
// the worker's side that maps what it describes.
#include "kvmtool-gpu/devices/vgpu_worker/worker_recipe.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <system_error>
#include <type_traits>

#include "kvmtool-gpu/util/close_descriptors.h"

namespace kvmgpu::vgpu {

namespace {

constexpr uint32_t kRecipeMagic = 0x5257474b; // "KGWR"
static_assert(std::is_trivially_copyable_v<VgpuOptions>, "options cross as bytes");

class Writer {
public:
    template <class T>
    void put(const T& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        out_.insert(out_.end(), p, p + sizeof v);
    }
    void put_text(const std::string& s) {
        put(static_cast<uint32_t>(s.size()));
        out_.insert(out_.end(), s.begin(), s.end());
    }
    std::vector<uint8_t> take() { return std::move(out_); }

private:
    std::vector<uint8_t> out_;
};

class Reader {
public:
    explicit Reader(std::span<const uint8_t> in) : in_(in) {}
    template <class T>
    T get() {
        T v;
        need(sizeof v);
        std::memcpy(&v, in_.data() + at_, sizeof v);
        at_ += sizeof v;
        return v;
    }
    std::string get_text() {
        const auto n = get<uint32_t>();
        need(n);
        std::string s(reinterpret_cast<const char*>(in_.data() + at_), n);
        at_ += n;
        return s;
    }
    bool done() const { return at_ == in_.size(); }

private:
    void need(size_t n) const {
        if (in_.size() - at_ < n) throw std::length_error("the worker's recipe is cut short");
    }
    std::span<const uint8_t> in_;
    size_t at_ = 0;
};

// The counters' mapping in the worker (the VMM constructed them).
VgpuCounters* map_counters(int fd, uint64_t size) {
    if (size < sizeof(VgpuCounters)) throw std::invalid_argument("the vGPU counters' size is not the counters'");
    return static_cast<VgpuCounters*>(memmap::map_received(fd, size, "the vGPU counters"));
}

} // namespace

std::vector<uint8_t> encode_recipe(const WorkerRecipe& r, std::vector<int>* fds) {
    if (!r.make.make || !r.mem || !r.channel || r.counters.fd < 0 || r.kick_fd < 0)
        throw std::invalid_argument("a worker's recipe lacks its factory, memory, channel, counters or kick");
    if (r.mem->regions().size() > kRecipeMaxRegions) throw std::length_error("guest RAM is in too many regions for a GPU worker");
    Writer w;
    w.put(kRecipeMagic);
    w.put(reinterpret_cast<uintptr_t>(r.make.make));
    w.put_text(r.make.arg);
    w.put(r.opts);
    w.put(r.handle_seed);
    w.put(static_cast<uint32_t>(r.env.size()));
    for (const auto& [name, value] : r.env) w.put_text(name), w.put_text(value);
    w.put(r.spin_us);
    w.put(r.channel->data_bytes());
    w.put(r.counters.size);
    w.put(static_cast<uint32_t>(r.mem->regions().size()));
    fds->assign({r.kick_fd, r.channel->share().fd, r.counters.fd});
    for (const memmap::Region& region : r.mem->regions()) {
        w.put(region.base.value);
        w.put(region.size());
        w.put(region.backing->page_size());
        w.put(region.backing->source());
        fds->push_back(region.backing->fd());
    }
    std::vector<uint8_t> bytes = w.take();
    if (bytes.size() > kRecipeMaxBytes) throw std::length_error("a GPU worker's recipe is too long");
    return bytes;
}

void run_worker_from_recipe(std::span<const uint8_t> bytes, std::span<const int> fds, pid_t vmm) {
    close_descriptors_but(fds); // the zygote's socket and whatever else the zygote held
    try {
        Reader in(bytes);
        if (in.get<uint32_t>() != kRecipeMagic || fds.size() < 3) throw std::invalid_argument("not a worker's recipe");
        WorkerSetup setup{};
        setup.make.make = reinterpret_cast<decltype(setup.make.make)>(in.get<uintptr_t>());
        setup.make.arg = in.get_text();
        setup.opts = in.get<VgpuOptions>();
        setup.handle_seed = in.get<uint32_t>();
        for (uint32_t n = in.get<uint32_t>(); n > 0; --n) {
            std::string name = in.get_text();
            setup.env.emplace_back(std::move(name), in.get_text());
        }
        const auto spin_us = in.get<uint32_t>();
        const auto data_bytes = in.get<uint64_t>();
        const auto counters_bytes = in.get<uint64_t>();
        const auto regions = in.get<uint32_t>();
        if (regions != fds.size() - 3) throw std::invalid_argument("the recipe's regions and descriptors disagree");
        setup.kick_fd = fds[0];
        // Owned from here: the channel and each backing close their descriptor.
        std::unique_ptr<WorkerChannel> channel = WorkerChannel::adopt(fds[1], data_bytes, spin_us);
        setup.counters = map_counters(fds[2], counters_bytes);
        setup.own = {channel->share(), memmap::ForkShare{setup.counters, counters_bytes, fds[2]}};
        auto* mem = new memmap::GuestMemory; // the worker's until it _exit()s
        for (uint32_t i = 0; i < regions; ++i) {
            const memmap::GuestPhysAddr base{in.get<uint64_t>()};
            const auto size = in.get<uint64_t>();
            const auto page = in.get<memmap::PageSize>();
            const auto source = in.get<memmap::BackingSource>();
            mem->add_region(base, memmap::Backing::adopt(fds[3 + i], page, size, source));
        }
        for (const memmap::Region& r : mem->regions()) setup.own.push_back({r.backing->data(), r.size(), r.backing->fd()});
        if (!in.done()) throw std::invalid_argument("the worker's recipe runs on past its end");
        setup.mem = mem;
        run_gpu_worker(*channel.release(), setup, vmm);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vgpu-worker: cannot start from its recipe: %s\n", e.what());
    }
    _exit(1);
}

} // namespace kvmgpu::vgpu
