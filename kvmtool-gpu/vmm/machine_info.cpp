#include "kvmtool-gpu/vmm/machine_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "kvmtool-gpu/kvm/kvm_flavor.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "memmap/huge_page_pool.h"

namespace kvmgpu {

namespace {

std::string first_line(const std::string& path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

// "value" of the first line "key<sep>value" in a file.
std::string field(const std::string& path, const std::string& key, char sep) {
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind(key, 0) != 0) continue;
        const size_t at = line.find(sep);
        if (at == std::string::npos) continue;
        std::string v = line.substr(at + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(v.begin());
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        return v;
    }
    return "";
}

std::string pool_text(memmap::PageSize p) {
    const auto pool = memmap::read_huge_page_pool(p);
    const std::string name(memmap::to_string(p));
    if (!pool) return name + ": no pool";
    return name + ": " + std::to_string(pool->available()) + " available of " + std::to_string(pool->total);
}

} // namespace

MachineInfo collect_machine_info() {
    MachineInfo m;
    char buf[64];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    m.date_utc = buf;
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
    m.cpu_model = field("/proc/cpuinfo", "model name", ':');
    m.cpus = static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
    const std::string mem = field("/proc/meminfo", "MemTotal", ':');
    m.mem_total = std::strtoull(mem.c_str(), nullptr, 10) * 1024;
    m.os = field("/etc/os-release", "PRETTY_NAME", '=');
    utsname u{};
    if (uname(&u) == 0) m.kernel = std::string(u.release) + " " + u.version;
    const std::string thp = first_line("/sys/kernel/mm/transparent_hugepage/enabled");
    const size_t l = thp.find('['), r = thp.find(']');
    m.thp = l != std::string::npos && r > l ? thp.substr(l + 1, r - l - 1) : (thp.empty() ? "n/a" : thp);
    m.pools = pool_text(memmap::PageSize::k2M) + ", " + pool_text(memmap::PageSize::k1G);

    const kvmgpu::KvmFlavor f = kvmgpu::detect_kvm_flavor();
    m.host_virtualized = kvmgpu::KvmSystem::host_is_virtualized();
    m.host_hypervisor = f.host_hypervisor;
    while (!m.host_hypervisor.empty() && m.host_hypervisor.back() == ' ') m.host_hypervisor.pop_back();
    m.native_emulated = m.host_hypervisor.rfind("TCG", 0) == 0;
    m.kvm_flavor = f.describe();
    if (m.native_emulated) {
        m.native_note = "this host is itself emulated by QEMU TCG: native figures measure the emulator, not hardware";
    } else if (m.host_virtualized) {
        m.native_note = "this host is itself a VM (hypervisor signature '" + m.host_hypervisor +
                        "'): native accesses are translated through whatever the outer hypervisor gives the "
                        "hardware (EPT/NPT, or shadow page tables under PVM), so a native huge page is huge in "
                        "hardware only if the outer host backs it so";
    } else {
        m.native_note = "bare metal: native figures are the hardware's own";
    }
    return m;
}

} // namespace kvmgpu
