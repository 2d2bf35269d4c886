#include "kvmtool-gpu/bench/share_guests.h"

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/devices/terminal_text.h"
#include "kvmtool-gpu/devices/vgpu/alias_budget.h"

namespace kvmgpu::bench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kTailLines = 8;

// What the guests' console sinks (on their vCPU threads) tell the driver.
struct Progress {
    std::mutex mu;
    std::condition_variable changed;
    unsigned ready = 0, finished = 0;
};

struct Member {
    std::unique_ptr<VirtualMachine> vm;
    std::optional<AttachedVgpu> vgpu;
    SharedGuest out;
    std::optional<Clock::time_point> done_at; // SHARE-DONE, or the run's end
    std::optional<uint64_t> stop_word;        // the guest address SHARE-READY named
    std::exception_ptr failed;
};

uint64_t launches(const vgpu::VgpuCounterSnapshot& c) {
    return c.per_opcode[VGPU_OP_LAUNCH_KERNEL_PACKED];
}
uint64_t bytes(const vgpu::VgpuCounterSnapshot& c) { return c.bytes_htod + c.bytes_dtoh; }

} // namespace

std::optional<uint64_t> share_ready_stop_word(std::string_view line) {
    constexpr std::string_view kPrefix = KVMGPU_TAG_SHARE_READY " stop=0x";
    if (!line.starts_with(kPrefix)) return std::nullopt;
    line.remove_prefix(kPrefix.size());
    uint64_t gpa = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), gpa, 16);
    if (line.empty() || ec != std::errc{} || end != line.data() + line.size()) return std::nullopt;
    return gpa;
}

std::vector<SharedGuest> run_shared_guests(const KvmSystem& kvm, const VmOptions& base, const VgpuConfig& vgpu,
                                           const std::vector<std::string>& cmdlines,
                                           const std::optional<ShareWindow>& window) {
    Progress progress;
    std::vector<Member> members(cmdlines.size());
    // VMs whose device models share this process share its mappings evenly.
    vgpu::AliasBudget::process().set_vms_sharing(cmdlines.size());
    for (size_t i = 0; i < members.size(); ++i) {
        Member& m = members[i];
        VmOptions o = base;
        o.seed = base.seed + i;
        o.cmdline = cmdlines[i];
        o.console = [&m, &progress](std::string_view line) {
            while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
            if (line.starts_with(KVMGPU_TAG_SHARE_READY)) {
                const std::optional<uint64_t> stop = share_ready_stop_word(line);
                std::lock_guard lock(progress.mu);
                m.stop_word = stop;
                ++progress.ready;
                progress.changed.notify_all();
                return;
            }
            if (line == KVMGPU_TAG_SHARE_DONE) {
                std::lock_guard lock(progress.mu);
                m.done_at = Clock::now();
                return;
            }
            if (auto l = parse_bench_line(line, {KVMGPU_TAG_SHARE})) {
                m.out.report = std::move(*l);
                return;
            }
            m.out.tail.push_back(escape_for_terminal(line));
            if (m.out.tail.size() > kTailLines) m.out.tail.erase(m.out.tail.begin());
        };
        m.vm = std::make_unique<VirtualMachine>(kvm, o);
        m.vgpu = attach_vgpu(*m.vm, vgpu);
    }
    std::vector<std::thread> threads;
    for (Member& m : members)
        threads.emplace_back([&m, &progress] {
            try {
                m.out.result = m.vm->run();
            } catch (...) {
                m.failed = std::current_exception();
            }
            std::lock_guard lock(progress.mu);
            if (!m.done_at) m.done_at = Clock::now();
            ++progress.finished;
            progress.changed.notify_all();
        });

    std::string window_failure;
    Clock::time_point window_end;
    if (window) {
        const size_t n = members.size();
        std::unique_lock lock(progress.mu);
        progress.changed.wait_for(lock, std::chrono::duration<double>(window->ready_timeout_s),
                                  [&] { return progress.ready == n || progress.finished != 0; });
        const unsigned ready = progress.ready;
        lock.unlock();
        if (ready != n) {
            window_failure = "not every guest got ready (" + std::to_string(ready) + " of " + std::to_string(n) + ")";
        } else {
            const auto w = read_window(*window, [&] {
                std::vector<vgpu::VgpuCounterSnapshot> s;
                for (Member& m : members) s.push_back(m.vgpu->device->counters());
                return s;
            });
            window_end = Clock::now();
            // The window is over: the members may stop (natively the same).
            std::lock_guard stop_lock(progress.mu);
            for (Member& m : members)
                if (m.stop_word) m.vm->memory().write_obj<uint32_t>(memmap::GuestPhysAddr{*m.stop_word}, 1);
            for (size_t i = 0; i < n; ++i) {
                members[i].out.bytes_per_s = static_cast<double>(bytes(w.after[i]) - bytes(w.before[i])) / w.seconds;
                members[i].out.launches_per_s =
                    static_cast<double>(launches(w.after[i]) - launches(w.before[i])) / w.seconds;
            }
        }
    }
    for (auto& t : threads) t.join();

    std::vector<SharedGuest> out;
    for (Member& m : members) {
        m.vgpu->device->stop();
        SharedGuest& g = m.out;
        if (m.failed) {
            try {
                std::rethrow_exception(m.failed);
            } catch (const std::exception& e) {
                g.status = std::string("error: ") + e.what();
            }
        } else if (!g.result.passed()) {
            g.status = std::string(to_string(g.result.outcome)) + ", exit code " + std::to_string(g.result.exit_code);
            if (!g.result.detail.empty()) g.status += " (" + g.result.detail + ")";
        } else if (!window_failure.empty()) {
            g.status = window_failure;
        } else if (window && (!m.done_at || *m.done_at < window_end)) {
            g.status = "stopped working before the window ended (give it more --slack)";
        } else if (window && m.stop_word && g.report && g.report->get("ended") == "bound") {
            g.status = "worked to its time bound: the window's end never reached it";
        }
        out.push_back(std::move(g));
    }
    return out;
}

} // namespace kvmgpu::bench
