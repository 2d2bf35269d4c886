#include "tlb-study/perf_counters.h"

#ifdef KVMGPU_HAVE_LIBPFM
#include <perfmon/pfmlib_perf_event.h> // brings its own perf_event.h: do not mix with <linux/perf_event.h>
#else
#include <linux/perf_event.h>
#endif
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace tlbstudy {

namespace {

int real_perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
    return static_cast<int>(::syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags));
}

const char* errno_name(int e) {
    switch (e) {
    case ENOENT: return "ENOENT";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENODEV: return "ENODEV";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    case EMFILE: return "EMFILE";
    case E2BIG: return "E2BIG";
    case EBUSY: return "EBUSY";
    }
    return "errno";
}

std::string errno_text(int e) { return std::string(std::strerror(e)) + " (" + errno_name(e) + ")"; }

std::string paranoid_hint() {
    std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
    int level = 0;
    if (f >> level) return "; kernel.perf_event_paranoid is " + std::to_string(level);
    return "";
}

// Fills attr for one event name; false (why set) when it has no encoding here.
bool encode(const std::string& name, bool kernel, perf_event_attr* attr, std::string* why) {
    std::memset(attr, 0, sizeof *attr);
#ifdef KVMGPU_HAVE_LIBPFM
    static const int init = pfm_initialize();
    if (init != PFM_SUCCESS) {
        *why = std::string("libpfm4 pfm_initialize failed: ") + pfm_strerror(init);
        return false;
    }
    pfm_perf_encode_arg_t arg;
    std::memset(&arg, 0, sizeof arg);
    arg.attr = attr;
    arg.size = sizeof arg;
    const int rc = pfm_get_os_event_encoding(name.c_str(), kernel ? (PFM_PLM0 | PFM_PLM3) : PFM_PLM3,
                                             PFM_OS_PERF_EVENT, &arg);
    if (rc != PFM_SUCCESS) {
        *why = "libpfm4 does not know " + name + " on this host's PMU (" + pfm_strerror(rc) + ")";
        return false;
    }
    return true;
#else
    // Without libpfm4 only the kernel's generic events are known.
    constexpr uint64_t kDtlb = PERF_COUNT_HW_CACHE_DTLB, kMiss = uint64_t{PERF_COUNT_HW_CACHE_RESULT_MISS} << 16;
    if (name == "perf::CYCLES") {
        attr->type = PERF_TYPE_HARDWARE;
        attr->config = PERF_COUNT_HW_CPU_CYCLES;
    } else if (name == "perf::DTLB-LOAD-MISSES") {
        attr->type = PERF_TYPE_HW_CACHE;
        attr->config = kDtlb | (uint64_t{PERF_COUNT_HW_CACHE_OP_READ} << 8) | kMiss;
    } else if (name == "perf::DTLB-STORE-MISSES") {
        attr->type = PERF_TYPE_HW_CACHE;
        attr->config = kDtlb | (uint64_t{PERF_COUNT_HW_CACHE_OP_WRITE} << 8) | kMiss;
    } else {
        *why = name + " needs libpfm4, which this build lacks";
        return false;
    }
    attr->exclude_kernel = kernel ? 0 : 1;
    attr->exclude_hv = 1;
    return true;
#endif
}

} // namespace

const std::vector<CounterSpec>& default_counter_specs() {
    static const std::vector<CounterSpec> specs = {
        {"dtlb_load_misses",
         {"perf::DTLB-LOAD-MISSES", "LS_L1_D_TLB_MISS:ALL", "DTLB_LOAD_MISSES:MISS_CAUSES_A_WALK"}},
        {"dtlb_store_misses", {"perf::DTLB-STORE-MISSES", "DTLB_STORE_MISSES:MISS_CAUSES_A_WALK"}},
        {"page_walks_completed",
         {"DTLB_LOAD_MISSES:WALK_COMPLETED", "LS_TABLEWALKER:DSIDE", "LS_TABLEWALKER:DC_TYPE0:DC_TYPE1"}},
        {"page_walk_cycles",
         {"DTLB_LOAD_MISSES:WALK_ACTIVE", "DTLB_LOAD_MISSES:WALK_DURATION", "DTLB_LOAD_MISSES:WALK_PENDING"}},
        {"cycles", {"perf::CYCLES"}},
    };
    return specs;
}

PerfCounterSet::PerfCounterSet(const std::vector<CounterSpec>& specs, CounterOptions opts) {
    PerfOpenFn open_fn = opts.open ? opts.open : real_perf_event_open;
    std::string first_open_error; // the first perf_event_open failure: the host's answer
    std::string missing;          // per metric, when some others opened
    bool kernel = opts.count_kernel;
    bool fell_back_to_user = false;

    for (const auto& spec : specs) {
        std::string why = "no candidate events";
        bool opened = false;
        for (const auto& name : spec.events) {
            perf_event_attr attr;
            if (!encode(name, kernel, &attr, &why)) continue;
            attr.size = sizeof attr;
            attr.disabled = 1;
            attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
            errno = 0;
            int fd = open_fn(&attr, opts.tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
            if (fd < 0 && (errno == EACCES || errno == EPERM) && kernel) {
                // Not allowed to count ring 0: user mode only, and say so.
                if (encode(name, false, &attr, &why)) {
                    attr.size = sizeof attr;
                    attr.disabled = 1;
                    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
                    errno = 0;
                    fd = open_fn(&attr, opts.tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
                    if (fd >= 0) {
                        kernel = false;
                        fell_back_to_user = true;
                    }
                }
            }
            if (fd < 0) {
                const int e = errno != 0 ? errno : ENOENT;
                why = "perf_event_open(" + name + ") failed: " + errno_text(e);
                if (e == EACCES || e == EPERM) why += paranoid_hint();
                if (first_open_error.empty()) first_open_error = why;
                continue;
            }
            open_.push_back({spec.metric, name, fd});
            opened = true;
            break;
        }
        if (!opened) missing += (missing.empty() ? "" : "; ") + spec.metric + ": " + why;
    }

    if (open_.empty()) {
        reason_ = "no PMU counters on this host: " + (first_open_error.empty() ? missing : first_open_error);
    } else {
        if (!missing.empty()) reason_ = "not counted: " + missing;
        if (fell_back_to_user) reason_ += std::string(reason_.empty() ? "" : "; ") + "user mode only (ring 0 not allowed)";
    }
}

PerfCounterSet::~PerfCounterSet() {
    for (auto& o : open_) ::close(o.fd);
}

PerfCounterSet::PerfCounterSet(PerfCounterSet&& o) noexcept : open_(std::move(o.open_)), reason_(std::move(o.reason_)) {
    o.open_.clear();
}

PerfCounterSet& PerfCounterSet::operator=(PerfCounterSet&& o) noexcept {
    if (this != &o) {
        for (auto& c : open_) ::close(c.fd);
        open_ = std::move(o.open_);
        reason_ = std::move(o.reason_);
        o.open_.clear();
    }
    return *this;
}

std::vector<std::string> PerfCounterSet::metrics() const {
    std::vector<std::string> m;
    for (const auto& o : open_) m.push_back(o.metric);
    return m;
}

std::vector<std::string> PerfCounterSet::describe_events() const {
    std::vector<std::string> d;
    for (const auto& o : open_) d.push_back(o.metric + "=" + o.event);
    return d;
}

void PerfCounterSet::start() {
    for (const auto& o : open_) {
        ::ioctl(o.fd, PERF_EVENT_IOC_RESET, 0);
        ::ioctl(o.fd, PERF_EVENT_IOC_ENABLE, 0);
    }
}

void PerfCounterSet::stop() {
    for (const auto& o : open_) ::ioctl(o.fd, PERF_EVENT_IOC_DISABLE, 0);
}

std::vector<CounterValue> PerfCounterSet::read() const {
    std::vector<CounterValue> out;
    for (const auto& o : open_) {
        uint64_t v[3] = {}; // value, time_enabled, time_running
        if (::read(o.fd, v, sizeof v) != static_cast<ssize_t>(sizeof v)) continue;
        if (v[2] == 0) continue; // never scheduled on the PMU: no value rather than a zero
        CounterValue c{o.metric, o.event, v[0], false};
        if (v[2] < v[1]) {
            c.value = static_cast<uint64_t>(static_cast<unsigned __int128>(v[0]) * v[1] / v[2]);
            c.scaled = true;
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::optional<uint64_t> find_value(const std::vector<CounterValue>& values, const std::string& metric) {
    for (const auto& v : values)
        if (v.metric == metric) return v.value;
    return std::nullopt;
}

} // namespace tlbstudy
