// Hardware TLB counters for the calling thread through perf_event_open,
// with the events named by libpfm4: dTLB load and store misses, page-walk
// completions and page-walk cycles, plus cycles, each from the first name
// in its candidate list that libpfm4 encodes and the kernel accepts.
//
// Hosts without a PMU (ours, CI and the H100 machine: perf_event_open
// answers ENOENT / EOPNOTSUPP / ENODEV, or EACCES when not allowed) get an
// unavailable set whose reason() is one line, "no PMU counters on this
// host: ...", and whose read() has no values: callers print nothing for
// those columns, never zeros.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct perf_event_attr;

namespace tlbstudy {

// What one counter measures, with the event names tried for it in order.
struct CounterSpec {
    std::string metric;              // column name, e.g. "dtlb_load_misses"
    std::vector<std::string> events; // libpfm4 names, e.g. "perf::DTLB-LOAD-MISSES"
};

// dtlb_load_misses, dtlb_store_misses, page_walks_completed,
// page_walk_cycles, cycles: Intel and AMD names, then the kernel's generic
// perf:: events.
const std::vector<CounterSpec>& default_counter_specs();

// The perf_event_open system call, replaceable in tests.
using PerfOpenFn = int (*)(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags);

struct CounterOptions {
    pid_t tid = 0;              // 0: the calling thread (a vCPU thread when it runs KVM_RUN)
    bool count_kernel = true;   // also ring 0 (our guests run there); falls back to user only on EACCES
    PerfOpenFn open = nullptr;  // nullptr: the real syscall
};

// One counter's value over a start()..stop() interval, scaled by
// time_enabled / time_running when the kernel multiplexed it.
struct CounterValue {
    std::string metric;
    std::string event;
    uint64_t value = 0;
    bool scaled = false;
};

class PerfCounterSet {
public:
    // Never throws: failures end up in available() / reason().
    explicit PerfCounterSet(const std::vector<CounterSpec>& specs = default_counter_specs(),
                            CounterOptions opts = {});
    ~PerfCounterSet();
    PerfCounterSet(PerfCounterSet&&) noexcept;
    PerfCounterSet& operator=(PerfCounterSet&&) noexcept;
    PerfCounterSet(const PerfCounterSet&) = delete;
    PerfCounterSet& operator=(const PerfCounterSet&) = delete;

    bool available() const { return !open_.empty(); }
    // Unavailable: "no PMU counters on this host: <why>". Available: empty,
    // or which metrics are missing and why (one line).
    const std::string& reason() const { return reason_; }
    // Metrics that opened, in spec order (the columns that get values).
    std::vector<std::string> metrics() const;
    // The libpfm4 event and encoding chosen per opened metric, for reports.
    std::vector<std::string> describe_events() const;

    void start(); // reset + enable
    void stop();  // disable
    // Values since start(); empty when unavailable or a read failed.
    std::vector<CounterValue> read() const;

private:
    struct Open {
        std::string metric, event;
        int fd;
    };
    std::vector<Open> open_;
    std::string reason_;
};

// Looks up one metric's value in a read(); nullopt when absent.
std::optional<uint64_t> find_value(const std::vector<CounterValue>& values, const std::string& metric);

} // namespace tlbstudy
