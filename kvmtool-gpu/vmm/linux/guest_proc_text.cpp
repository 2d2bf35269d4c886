#include "kvmtool-gpu/vmm/linux/guest_proc_text.h"

#include <cpuid.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace kvmgpu::linux_abi {

namespace {
struct Regs {
    uint32_t a = 0, b = 0, c = 0, d = 0;
};

// The guest's leaf where `guest` has it, else the host's.
Regs leaf_regs(const std::vector<kvm_cpuid_entry2>& guest, uint32_t leaf) {
    for (const auto& e : guest)
        if (e.function == leaf && e.index == 0) return {e.eax, e.ebx, e.ecx, e.edx};
    Regs r;
    if (!__get_cpuid_count(leaf, 0, &r.a, &r.b, &r.c, &r.d)) return {};
    return r;
}

std::string trim(std::string s) {
    s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
    const auto first = s.find_first_not_of(' ');
    const auto last = s.find_last_not_of(' ');
    return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

// Linux's names for the CPUID bits user programs test. Left out: osxsave
// (Linux never shows it) and fsgsbase (Linux shows it only where it sets
// CR4.FSGSBASE, which a guest's CR4 does not have).
struct Flag {
    uint32_t leaf;
    char reg; // 'b', 'c' or 'd'
    int bit;
    const char* name;
};
constexpr Flag kFlags[] = {
    {1, 'd', 0, "fpu"},       {1, 'd', 4, "tsc"},         {1, 'd', 8, "cx8"},       {1, 'd', 15, "cmov"},
    {1, 'd', 19, "clflush"},  {1, 'd', 23, "mmx"},        {1, 'd', 24, "fxsr"},     {1, 'd', 25, "sse"},
    {1, 'd', 26, "sse2"},     {1, 'c', 0, "pni"},         {1, 'c', 1, "pclmulqdq"}, {1, 'c', 9, "ssse3"},
    {1, 'c', 12, "fma"},      {1, 'c', 13, "cx16"},       {1, 'c', 19, "sse4_1"},   {1, 'c', 20, "sse4_2"},
    {1, 'c', 22, "movbe"},    {1, 'c', 23, "popcnt"},     {1, 'c', 25, "aes"},      {1, 'c', 26, "xsave"},
    {1, 'c', 28, "avx"},        {1, 'c', 29, "f16c"},     {1, 'c', 30, "rdrand"},
    {1, 'c', 31, "hypervisor"}, {7, 'b', 3, "bmi1"},      {7, 'b', 5, "avx2"},
    {7, 'b', 8, "bmi2"},      {7, 'b', 9, "erms"},        {7, 'b', 16, "avx512f"},  {7, 'b', 17, "avx512dq"},
    {7, 'b', 18, "rdseed"},   {7, 'b', 19, "adx"},        {7, 'b', 21, "avx512ifma"}, {7, 'b', 23, "clflushopt"},
    {7, 'b', 24, "clwb"},     {7, 'b', 28, "avx512cd"},   {7, 'b', 29, "sha_ni"},   {7, 'b', 30, "avx512bw"},
    {7, 'b', 31, "avx512vl"}, {7, 'c', 1, "avx512vbmi"},  {7, 'c', 6, "avx512_vbmi2"}, {7, 'c', 8, "gfni"},
    {7, 'c', 9, "vaes"},      {7, 'c', 10, "vpclmulqdq"}, {7, 'c', 11, "avx512_vnni"}, {7, 'c', 12, "avx512_bitalg"},
    {7, 'c', 14, "avx512_vpopcntdq"}, {7, 'd', 4, "fsrm"}, {7, 'd', 22, "amx_bf16"}, {7, 'd', 24, "amx_tile"},
    {7, 'd', 25, "amx_int8"},
};

std::string flags_line(const Regs& leaf1, const Regs& leaf7) {
    std::string out;
    for (const Flag& f : kFlags) {
        const Regs& r = f.leaf == 1 ? leaf1 : leaf7;
        const uint32_t v = f.reg == 'b' ? r.b : f.reg == 'c' ? r.c : r.d;
        if (v >> f.bit & 1) out += (out.empty() ? "" : " ") + std::string(f.name);
    }
    return out;
}
} // namespace

std::string maps_text(std::vector<MapsEntry> entries) {
    std::sort(entries.begin(), entries.end(), [](const MapsEntry& a, const MapsEntry& b) { return a.lo < b.lo; });
    std::string out;
    for (const MapsEntry& e : entries) {
        if (e.hi <= e.lo) continue;
        char head[96];
        const int n = std::snprintf(head, sizeof head, "%08llx-%08llx %s %08llx 00:00 0",
                                    static_cast<unsigned long long>(e.lo), static_cast<unsigned long long>(e.hi),
                                    e.perms.c_str(), static_cast<unsigned long long>(e.offset));
        std::string line(head, static_cast<size_t>(std::max(n, 0)));
        if (!e.name.empty()) line += std::string(line.size() < 73 ? 73 - line.size() : 1, ' ') + e.name;
        out += line + "\n";
    }
    return out;
}

std::string cpuinfo_text(const std::vector<kvm_cpuid_entry2>& guest) {
    const auto cpuid = [&guest](uint32_t leaf) { return leaf_regs(guest, leaf); };
    const Regs v = cpuid(0);
    char vendor[13] = {};
    std::memcpy(vendor, &v.b, 4);
    std::memcpy(vendor + 4, &v.d, 4);
    std::memcpy(vendor + 8, &v.c, 4);
    const Regs l1 = cpuid(1);
    const Regs l7 = v.a >= 7 ? cpuid(7) : Regs{};
    std::string model_name;
    if (cpuid(0x80000000).a >= 0x80000004)
        for (uint32_t leaf = 0x80000002; leaf <= 0x80000004; ++leaf) {
            const Regs r = cpuid(leaf);
            model_name.append(reinterpret_cast<const char*>(&r), sizeof r);
        }
    const uint32_t base_family = l1.a >> 8 & 0xf;
    const uint32_t family = base_family == 0xf ? base_family + (l1.a >> 20 & 0xff) : base_family;
    const uint32_t model = (base_family == 0x6 || base_family == 0xf) ? ((l1.a >> 16 & 0xf) << 4 | (l1.a >> 4 & 0xf))
                                                                      : (l1.a >> 4 & 0xf);
    std::string out;
    out += "processor\t: 0\n";
    out += "vendor_id\t: " + std::string(vendor) + "\n";
    out += "cpu family\t: " + std::to_string(family) + "\n";
    out += "model\t\t: " + std::to_string(model) + "\n";
    out += "model name\t: " + trim(model_name) + "\n";
    out += "stepping\t: " + std::to_string(l1.a & 0xf) + "\n";
    out += "physical id\t: 0\nsiblings\t: 1\ncore id\t\t: 0\ncpu cores\t: 1\n";
    out += "flags\t\t: " + flags_line(l1, l7) + "\n\n";
    return out;
}

std::string meminfo_text(uint64_t total_bytes, uint64_t free_bytes) {
    const auto kb = [](uint64_t bytes) { return std::to_string(bytes / 1024); };
    std::string out;
    const auto line = [&](const char* name, const std::string& value) {
        std::string l = std::string(name) + ":";
        l += std::string(l.size() < 16 ? 16 - l.size() : 1, ' ');
        out += l + std::string(value.size() < 8 ? 8 - value.size() : 0, ' ') + value + " kB\n";
    };
    line("MemTotal", kb(total_bytes));
    line("MemFree", kb(free_bytes));
    line("MemAvailable", kb(free_bytes));
    line("Buffers", "0");
    line("Cached", "0");
    line("SwapTotal", "0");
    line("SwapFree", "0");
    return out;
}

std::string status_text(const std::string& name, uint32_t threads, uint64_t used_bytes) {
    const size_t slash = name.rfind('/');
    const std::string base = (slash == std::string::npos ? name : name.substr(slash + 1)).substr(0, 15);
    const std::string kb = std::to_string(used_bytes / 1024) + " kB\n";
    return "Name:\t" + base + "\nUmask:\t0022\nState:\tR (running)\nTgid:\t1\nNgid:\t0\nPid:\t1\nPPid:\t0\n"
           "TracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nGroups:\t\nVmSize:\t" + kb +
           "VmRSS:\t" + kb + "Threads:\t" + std::to_string(threads) +
           "\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n";
}

} // namespace kvmgpu::linux_abi
