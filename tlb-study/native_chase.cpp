#include "tlb-study/native_chase.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <set>

#include "memmap/backing.h"
#include "kvmtool-gpu/abi/chase_layout.h"

namespace tlbstudy {

namespace {

// One page size's buffer and its chase state while the sweep runs.
struct Lane {
    size_t result; // index into the results
    const NativeRun* run;
    std::unique_ptr<memmap::Backing> backing;
    void* p = nullptr;
    std::vector<double> ns;
    std::map<std::string, CounterValue> totals;
};

void add_counts(Lane& lane, const std::vector<CounterValue>& values) {
    for (const auto& v : values) {
        auto [it, fresh] = lane.totals.emplace(v.metric, v);
        if (!fresh) {
            it->second.value += v.value;
            it->second.scaled |= v.scaled;
        }
    }
}

} // namespace

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::vector<NativeChaseResult> run_native_sweep(const std::vector<NativeRun>& runs, const ChaseParams& params,
                                                PerfCounterSet* counters, const Progress& progress) {
    std::vector<NativeChaseResult> results(runs.size());
    std::vector<Lane> lanes;
    std::set<uint64_t> all_ws;
    for (size_t i = 0; i < runs.size(); ++i) {
        NativeChaseResult& res = results[i];
        res.pages = runs[i].pages;
        res.skip = runs[i].skip;
        res.note = runs[i].note;
        if (!runs[i].skip.empty() || runs[i].ws.empty()) continue;
        try {
            // Prefaulted: the chase touches every page anyway, and populating
            // in the kernel is far cheaper than one demand fault per page
            // (under PVM here ~30 us each; see the backing table).
            auto b = memmap::Backing::create(runs[i].pages, runs[i].buffer_bytes, {.prefault = true});
            res.source = std::string(memmap::to_string(b->source()));
            lanes.push_back(Lane{i, &runs[i], std::move(b)});
            all_ws.insert(runs[i].ws.begin(), runs[i].ws.end());
        } catch (const std::exception& e) {
            res.error = e.what();
        }
    }

    const bool count = counters != nullptr && counters->available();
    const uint64_t accesses = chase_accesses_rounded(params.accesses);
    std::vector<uint32_t> order;
    for (uint64_t ws : all_ws) {
        const uint64_t nodes = chase_nodes(ws);
        order.resize(nodes);
        std::vector<Lane*> here;
        for (auto& lane : lanes) {
            if (std::find(lane.run->ws.begin(), lane.run->ws.end(), ws) == lane.run->ws.end()) continue;
            // SAFETY: nodes * 4096 <= ws <= buffer_bytes, the Backing's size.
            lane.p = build_chase(lane.backing->data(), nodes, order.data(), params.seed);
            lane.p = run_chase(lane.p, std::min(nodes, accesses)); // warm-up lap
            lane.ns.clear();
            lane.totals.clear();
            here.push_back(&lane);
        }
        for (uint32_t r = 0; r < params.reps; ++r) {
            for (Lane* lane : here) {
                if (count) counters->start();
                const auto t0 = std::chrono::steady_clock::now();
                lane->p = run_chase(lane->p, accesses);
                const auto t1 = std::chrono::steady_clock::now();
                if (count) {
                    counters->stop();
                    add_counts(*lane, counters->read());
                }
                lane->ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / double(accesses));
            }
        }
        for (Lane* lane : here) {
            NativeChaseResult& res = results[lane->result];
            // The chase must still be inside the buffer; this also keeps p alive.
            const auto at = static_cast<uint64_t>(static_cast<uint8_t*>(lane->p) - lane->backing->data());
            if (at >= nodes * kChaseNodeStride) {
                res.error = "chase left its buffer at ws " + size_label(ws);
                continue;
            }
            ChasePoint pt;
            pt.ws = ws;
            pt.accesses = accesses;
            pt.reps = params.reps;
            pt.ns_per_access = median(lane->ns);
            pt.ns_min = *std::min_element(lane->ns.begin(), lane->ns.end());
            for (auto& [metric, v] : lane->totals) pt.counters.push_back(v);
            if (progress) {
                char line[160];
                std::snprintf(line, sizeof line, "native %s ws=%s: %.2f ns/access (min %.2f)",
                              std::string(memmap::to_string(res.pages)).c_str(), size_label(ws).c_str(),
                              pt.ns_per_access, pt.ns_min);
                progress(line);
            }
            res.points.push_back(std::move(pt));
        }
    }
    return results;
}

} // namespace tlbstudy
