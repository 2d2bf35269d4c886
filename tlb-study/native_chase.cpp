#include "tlb-study/native_chase.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>

#include "memmap/backing.h"
#include "tlb-study/chase_layout.h"

namespace tlbstudy {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

NativeChaseResult run_native_chase(const NativeRun& run, const ChaseParams& params, PerfCounterSet* counters,
                                   const Progress& progress) {
    NativeChaseResult res;
    res.pages = run.pages;
    res.skip = run.skip;
    res.note = run.note;
    if (!run.skip.empty() || run.ws.empty()) return res;

    std::unique_ptr<memmap::Backing> backing;
    try {
        backing = memmap::Backing::create(run.pages, run.buffer_bytes, {});
    } catch (const std::exception& e) {
        res.error = e.what();
        return res;
    }
    res.source = std::string(memmap::to_string(backing->source()));
    const bool count = counters != nullptr && counters->available();
    const uint64_t accesses = chase_accesses_rounded(params.accesses);
    std::vector<uint32_t> order;

    for (uint64_t ws : run.ws) {
        const uint64_t nodes = chase_nodes(ws);
        order.resize(nodes);
        uint8_t* base = backing->data();
        // SAFETY: nodes * 4096 <= ws <= buffer_bytes, the Backing's size.
        void* p = build_chase(base, nodes, order.data(), params.seed);
        p = run_chase(p, std::min(nodes, accesses)); // warm-up lap

        std::vector<double> ns;
        std::map<std::string, CounterValue> totals;
        for (uint32_t r = 0; r < params.reps; ++r) {
            if (count) counters->start();
            const auto t0 = std::chrono::steady_clock::now();
            p = run_chase(p, accesses);
            const auto t1 = std::chrono::steady_clock::now();
            if (count) {
                counters->stop();
                for (const auto& v : counters->read()) {
                    auto [it, fresh] = totals.emplace(v.metric, v);
                    if (!fresh) {
                        it->second.value += v.value;
                        it->second.scaled |= v.scaled;
                    }
                }
            }
            ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(accesses));
        }
        // The chase must still be inside the buffer; this also keeps p alive.
        const auto at = static_cast<uint64_t>(static_cast<uint8_t*>(p) - base);
        if (at >= nodes * kChaseNodeStride) {
            res.error = "chase left its buffer at ws " + size_label(ws);
            return res;
        }
        ChasePoint pt;
        pt.ws = ws;
        pt.accesses = accesses;
        pt.reps = params.reps;
        pt.ns_per_access = median(ns);
        pt.ns_min = *std::min_element(ns.begin(), ns.end());
        for (auto& [metric, v] : totals) pt.counters.push_back(v);
        if (progress) {
            char line[160];
            std::snprintf(line, sizeof line, "native %s ws=%s: %.2f ns/access (min %.2f)",
                          std::string(memmap::to_string(run.pages)).c_str(), size_label(ws).c_str(), pt.ns_per_access,
                          pt.ns_min);
            progress(line);
        }
        res.points.push_back(std::move(pt));
    }
    return res;
}

} // namespace tlbstudy
