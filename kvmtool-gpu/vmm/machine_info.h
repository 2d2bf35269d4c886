// Where a result came from, for every table the harness writes: the
// machine, kernel, date, what executes guest code under this /dev/kvm,
// whether "native" code itself runs under a hypervisor or an emulator,
// the PMU, and the huge-page pools.
#pragma once

#include <cstdint>
#include <string>

namespace kvmgpu {

struct MachineInfo {
    std::string date_utc;      // 2026-11-23T10:11:12Z
    std::string hostname;
    std::string cpu_model;
    unsigned cpus = 0;
    uint64_t mem_total = 0;    // bytes
    std::string os;            // PRETTY_NAME
    std::string kernel;        // uname -r and -v
    std::string thp;           // /sys/kernel/mm/transparent_hugepage/enabled, the [selected] word
    std::string pools;         // "2M: 0/0 free, 1G: no pool"
    bool host_virtualized = false;
    std::string host_hypervisor; // CPUID 0x40000000 signature
    bool native_emulated = false; // this host's own code is emulated (TCG)
    std::string native_note;    // one line on what "native" means here
    bool kvm = false;           // /dev/kvm opened
    std::string kvm_note;       // why not
    std::string kvm_flavor;     // detect_kvm_flavor().describe()
    bool guest_code_emulated = false; // some guest run measured its code as emulated
    std::string guest_code = "not measured (no guest ran)"; // ExecutionMode::describe() of the guest runs
    bool pmu = false;
    std::string pmu_note;       // PerfCounterSet::reason()
    std::string pmu_events;     // metric=event, ... when available
};

// Everything but kvm*, guest_code* and pmu*, which the caller fills in.
MachineInfo collect_machine_info();

} // namespace kvmgpu
