#include "kvmtool-gpu/bench/gpu_topology.h"

#include <algorithm>
#include <set>

namespace kvmgpu::bench {

namespace {

std::string gpu_text(int g) { return "GPU " + std::to_string(g); }

int gpu_of(const std::vector<int>& gpus, int device) {
    return gpus[static_cast<size_t>(device) % gpus.size()];
}

} // namespace

const GpuPair* GpuTopology::pair(int a, int b) const {
    if (a == b) return nullptr;
    const int lo = std::min(a, b), hi = std::max(a, b);
    for (const GpuPair& p : pairs)
        if (p.a == lo && p.b == hi) return &p;
    return nullptr;
}

std::string link_text(const GpuPair& p) {
    if (p.link == LinkKind::NvLink)
    {
        if (p.nvlinks > 0) return "NVLink NV" + std::to_string(p.nvlinks);
        if (p.switch_nvlinks > 0) return "NVLink NV" + std::to_string(p.switch_nvlinks) + " through NVSwitch";
        return "NVLink (through a switch)";
    }
    if (!p.peer_access) return "no peer access";
    if (p.link == LinkKind::Pcie) return "PCIe";
    return "peer access (link type unknown)";
}

std::string device_pair_text(const GpuTopology& t, const std::vector<int>& gpus, int i, int j) {
    const std::string head = "devices " + std::to_string(i) + " and " + std::to_string(j) + ": ";
    const int a = gpu_of(gpus, i), b = gpu_of(gpus, j);
    if (t.host_backend) return head + "host backend (no GPU: " + t.why + "), copies staged through VMM memory";
    if (a == b) return head + "same GPU (" + gpu_text(a) + "), copies stay inside its memory";
    const GpuPair* p = t.pair(a, b);
    const std::string gpus_text = "GPUs " + std::to_string(a) + " and " + std::to_string(b) + ", ";
    if (!p) return head + gpus_text + "link unknown (" + (t.why.empty() ? "not probed" : t.why) + ")";
    std::string s = head + gpus_text + link_text(*p);
    if (!p->peer_access) return s + " (peer copies staged through host memory by the driver)";
    s += " (peer access";
    if (p->native_atomics) s += ", native atomics";
    if (p->perf_rank >= 0) s += ", performance rank " + std::to_string(p->perf_rank);
    if (p->link == LinkKind::Unknown && !t.link_source.empty()) s += "; " + t.link_source;
    return s + ")";
}

std::vector<std::string> device_pair_lines(const GpuTopology& t, const std::vector<int>& gpus) {
    std::vector<std::string> out;
    const int n = static_cast<int>(gpus.size());
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) out.push_back(device_pair_text(t, gpus, i, j));
    return out;
}

std::optional<bool> crosses_gpu_link(const GpuTopology& t, const std::vector<int>& gpus, int i, int j) {
    if (t.host_backend) return false;
    const int a = gpu_of(gpus, i), b = gpu_of(gpus, j);
    if (a == b) return false;
    const GpuPair* p = t.pair(a, b);
    if (!p) return std::nullopt;
    return p->peer_access;
}

GatherLabel multigpu_gather_label(const GpuTopology& t, const std::vector<int>& gpus) {
    GatherLabel g;
    constexpr int kRoles = 4;
    std::vector<int> crossing_roles;
    std::set<std::pair<int, int>> links_used;
    const int g0 = gpu_of(gpus, 0);
    for (int k = 1; k < kRoles; ++k) {
        const int dev = k % static_cast<int>(gpus.size()), gk = gpu_of(gpus, dev);
        std::string s = "role " + std::to_string(k) + " (device " + std::to_string(dev) + ", " + gpu_text(gk) + "): ";
        const auto crosses = crosses_gpu_link(t, gpus, 0, dev);
        if (!crosses) {
            g.known = false;
            s += "link unknown";
        } else if (*crosses) {
            ++g.crossing;
            crossing_roles.push_back(k);
            links_used.insert({std::min(g0, gk), std::max(g0, gk)});
            s += "crosses " + link_text(*t.pair(g0, gk)) + " to " + gpu_text(g0);
        } else if (t.host_backend) {
            s += "staged through VMM memory (host backend)";
        } else if (gk == g0) {
            s += "stays inside " + gpu_text(g0);
        } else {
            s += "through host memory (no peer access to " + gpu_text(g0) + ")";
        }
        g.roles.push_back(s);
    }
    g.seeds_case = g.known && g.crossing == kRoles - 1;
    std::string list;
    for (int k : crossing_roles) list += (list.empty() ? "" : ", ") + std::to_string(k);
    if (g.seeds_case) {
        g.summary = "the seed's case: all 3 remote partial products cross a GPU-to-GPU link";
        if (links_used.size() == 1)
            g.summary += " (all over the one link between GPUs " + std::to_string(links_used.begin()->first) +
                         " and " + std::to_string(links_used.begin()->second) + ", at once)";
    } else if (!g.known) {
        g.summary = "unknown whether this is the seed's case: the links were not probed (" +
                    (t.why.empty() ? std::string("no topology") : t.why) + ")";
    } else {
        g.summary = "NOT the seed's case: " + std::to_string(g.crossing) +
                    " of 3 remote partial products cross a GPU-to-GPU link" +
                    (list.empty() ? std::string() : " (role" + std::string(crossing_roles.size() > 1 ? "s " : " ") +
                                                         list + ")");
    }
    return g;
}

} // namespace kvmgpu::bench
