#include "kvmtool-gpu/bench/bandwidth_plan.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "kvmtool-gpu/abi/bandwidth_rules.h"

namespace kvmgpu::bench {

namespace {
std::vector<std::string> all_strategies() {
    std::vector<std::string> v;
    for (const auto& s : kSgStrategies) v.emplace_back(s.name);
    return v;
}

const SgStrategyName& strategy_named(const std::string& name) {
    for (const auto& s : kSgStrategies)
        if (name == s.name) return s;
    throw std::invalid_argument("unknown strategy '" + name + "' (" + kSgStrategyList + ")");
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
    return out;
}

std::vector<std::string> dirs_of(const BandwidthSweep& s) {
    std::vector<std::string> d;
    if (s.htod) d.emplace_back(kDirNames[0]);
    if (s.dtoh) d.emplace_back(kDirNames[1]);
    return d;
}
} // namespace

BandwidthSweep full_bandwidth_sweep(bool pool_1g) {
    BandwidthSweep s;
    for (uint64_t b = 4ull << 10; b <= 1ull << 30; b *= 4) s.sizes.push_back(b);
    s.host_pages = {memmap::PageSize::k4K, memmap::PageSize::k2M};
    if (pool_1g) s.host_pages.push_back(memmap::PageSize::k1G);
    s.guest_pages = {"4K", "2M"};
    s.strategies = all_strategies();
    s.registered = true;
    s.twocopy = true;
    return s;
}

BandwidthSweep quick_bandwidth_sweep() {
    BandwidthSweep s;
    s.sizes = {4ull << 10, 64ull << 10, 1ull << 20};
    s.host_pages = {memmap::PageSize::k4K, memmap::PageSize::k2M};
    s.guest_pages = {"4K", "2M"};
    s.strategies = all_strategies();
    s.twocopy = true;
    s.slow_max = 0;
    s.target = 1ull << 20;
    s.reps_min = 1;
    s.reps_max = 3;
    s.verify = 16ull << 10;
    s.sg_entries = 1ull << 14;
    return s;
}

std::string BandwidthKey::mode() const {
    if (source == "native") return "native " + kind;
    std::string m = "guest " + kind;
    if (kind != "pinned") m += " gp" + gpages;
    m += " hp" + hpages;
    if (kind == "pageable") m += " " + strategy;
    return m;
}

std::string BandwidthKey::gvim_mode() const {
    if (source == "native") return "native";
    if (kind == "twocopy") return "2-copy";
    if (kind == "pageable" && strategy == "bounce") return "1-copy";
    return "bypass";
}

std::string BandwidthVm::label() const {
    return "host pages " + std::string(memmap::to_string(host_pages)) + ", guest pages " + guest_pages;
}

uint64_t bandwidth_ram_bytes(uint64_t max_bytes, memmap::PageSize host_pages, uint64_t sg_entries) {
    const uint64_t page = std::max<uint64_t>(memmap::bytes(host_pages), 2ull << 20);
    // Runtime, image, ring, stack: 48 MiB; heap page tables: 8 bytes per 4 KiB
    // of RAM (~1/512, taken for the whole heap range); SG pool: 16 B an entry;
    // twocopy's bounce buffers (in every VM: 8 MiB is not worth a condition).
    uint64_t ram = max_bytes + (48ull << 20) + sg_entries * 16 + kTwoCopyBuffers * kTwoCopyChunkBytes;
    ram += ram / 256;
    ram = std::max<uint64_t>(ram, 128ull << 20);
    return (ram + page - 1) / page * page;
}

std::vector<BandwidthVm> plan_bandwidth_vms(const BandwidthSweep& s) {
    for (const auto& name : s.strategies) strategy_named(name); // validate
    std::vector<BandwidthVm> out;
    if (s.sizes.empty() || (!s.htod && !s.dtoh) || (!s.pinned && !s.pageable && !s.registered && !s.twocopy))
        return out;
    const uint64_t max_bytes = *std::max_element(s.sizes.begin(), s.sizes.end());
    std::string sizes;
    for (uint64_t b : s.sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(b);
    const auto dirs = dirs_of(s);
    for (memmap::PageSize hp : s.host_pages) {
        for (size_t g = 0; g < s.guest_pages.size(); ++g) {
            BandwidthVm vm;
            vm.host_pages = hp;
            vm.guest_pages = s.guest_pages[g];
            vm.pinned = s.pinned && g == 0;
            vm.pageable = s.pageable && !s.strategies.empty();
            vm.registered = s.registered;
            vm.twocopy = s.twocopy; // in every VM, as the bounce strategy it is measured against
            if (!vm.pinned && !vm.pageable && !vm.registered && !vm.twocopy) continue;
            vm.ram_bytes = bandwidth_ram_bytes(max_bytes, hp, s.sg_entries);
            std::vector<std::string> kinds;
            if (vm.pinned) kinds.emplace_back("pinned");
            if (vm.pageable) kinds.emplace_back("pageable");
            if (vm.registered) kinds.emplace_back("registered");
            if (vm.twocopy) kinds.emplace_back("twocopy");
            vm.cmdline = "guest_pages=" + vm.guest_pages + " sizes=" + sizes + " dirs=" + join(dirs) +
                         " kinds=" + join(kinds) + " strategies=" + join(s.strategies.empty() ? all_strategies() : s.strategies) +
                         " slow_max=" + std::to_string(s.slow_max) + " target=" + std::to_string(s.target) +
                         " reps_min=" + std::to_string(s.reps_min) + " reps_max=" + std::to_string(s.reps_max) +
                         " verify=" + std::to_string(s.verify) + " vgpu_sg_entries=" + std::to_string(s.sg_entries) +
                         " trials=" + std::to_string(s.trials);
            const std::string hps(memmap::to_string(hp));
            // The guest's order: kinds, strategies (in table order), sizes, dirs, trials.
            auto cell = [&](const std::string& d, const std::string& kind, const std::string& gp, const char* st,
                            uint64_t b) {
                for (unsigned t = 1; t <= s.trials; ++t)
                    vm.expected.push_back({"guest", d, kind, gp, hps, st, b, t, s.trials});
            };
            if (vm.pinned)
                for (uint64_t b : s.sizes)
                    for (const auto& d : dirs) cell(d, "pinned", "-", "none", b);
            if (vm.pageable)
                for (const auto& st : kSgStrategies) {
                    if (std::find(s.strategies.begin(), s.strategies.end(), st.name) == s.strategies.end()) continue;
                    for (uint64_t b : s.sizes) {
                        if (!strategy_runs_at(st, b, s.slow_max)) continue;
                        for (const auto& d : dirs) cell(d, "pageable", vm.guest_pages, st.name, b);
                    }
                }
            if (vm.registered)
                for (uint64_t b : s.sizes)
                    for (const auto& d : dirs) cell(d, "registered", vm.guest_pages, "none", b);
            if (vm.twocopy)
                for (uint64_t b : s.sizes)
                    for (const auto& d : dirs) cell(d, "twocopy", vm.guest_pages, "none", b);
            out.push_back(std::move(vm));
        }
    }
    return out;
}

std::vector<NativeCopy> plan_native_copies(const BandwidthSweep& s) {
    std::vector<NativeCopy> out;
    std::vector<const char*> kinds = {"pageable", "pinned"};
    if (s.registered) kinds.push_back("registered");
    for (const char* kind : kinds)
        for (uint64_t b : s.sizes)
            for (const auto& d : dirs_of(s))
                out.push_back({{"native", d, kind, "-", "-", "none", b, 1, s.trials},
                               reps_for(b, s.target, s.reps_min, s.reps_max)});
    return out;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const size_t end = comma == std::string::npos ? text.size() : comma;
        if (end > start) out.push_back(text.substr(start, end - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

unsigned parse_trials(const std::string& text) {
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxTrials)
        throw std::invalid_argument("--trials '" + text + "': expected a whole number from 1 to " +
                                    std::to_string(kMaxTrials));
    return n;
}

std::string size_text(uint64_t bytes) {
    const char* units[] = {"", "K", "M", "G", "T"};
    unsigned u = 0;
    while (u < 4 && bytes != 0 && bytes % 1024 == 0) bytes /= 1024, ++u;
    return std::to_string(bytes) + units[u];
}

} // namespace kvmgpu::bench
