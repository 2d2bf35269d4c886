#include "kvmtool-gpu/bench/topology_probe.h"

#include <iterator>
#include <set>

#include "kvmtool-gpu/bench/native_child.h"
#include "kvmtool-gpu/bench/nvml_links.h"
#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#endif

namespace kvmgpu::bench {

namespace {

// The driver's and NVML's answers take seconds; a probe that hangs is
// killed after this long.
constexpr double kTopologyBoundS = 120;

#ifdef KVMGPU_HAVE_CUDA_BACKEND

// In the child: the driver's view of every pair of distinct GPUs, NVML's links.
GpuTopology measure(const std::vector<int>& gpus, vgpu::BackendChoice backend) {
    GpuTopology t;
    std::string why;
    const vgpu::CudaDriverApi* api = vgpu::CudaDriverApi::get(&why);
    if (!api) {
        t.host_backend = backend == vgpu::BackendChoice::Auto;
        t.why = "no CUDA driver: " + why;
        return t;
    }
    std::string nvml_why;
    const auto nvml = NvmlLinks::open(&nvml_why);
    t.link_source = nvml ? "NVML" : nvml_why;
    const std::set<int> distinct(gpus.begin(), gpus.end());
    for (auto ia = distinct.begin(); ia != distinct.end(); ++ia)
        for (auto ib = std::next(ia); ib != distinct.end(); ++ib) {
            GpuPair p;
            p.a = *ia;
            p.b = *ib;
            CUdevice da, db;
            if (api->cuDeviceGet(&da, p.a) != CUDA_SUCCESS || api->cuDeviceGet(&db, p.b) != CUDA_SUCCESS) {
                t.why = "cuDeviceGet failed for GPU " + std::to_string(p.a) + " or " + std::to_string(p.b);
                continue;
            }
            int ab = 0, ba = 0, atomics = 0, rank = -1;
            api->cuDeviceCanAccessPeer(&ab, da, db);
            api->cuDeviceCanAccessPeer(&ba, db, da);
            p.peer_access = ab && ba;
            if (api->cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, da, db) ==
                CUDA_SUCCESS)
                p.native_atomics = atomics != 0;
            if (api->cuDeviceGetP2PAttribute(&rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, da, db) == CUDA_SUCCESS)
                p.perf_rank = rank;
            char bus_a[32] = {}, bus_b[32] = {};
            NvlinkReport r;
            std::string link_why;
            if (nvml && api->cuDeviceGetPCIBusId(bus_a, sizeof bus_a - 1, da) == CUDA_SUCCESS &&
                api->cuDeviceGetPCIBusId(bus_b, sizeof bus_b - 1, db) == CUDA_SUCCESS &&
                nvml->between(bus_a, bus_b, &r, &link_why)) {
                p.link = r.nvlink ? LinkKind::NvLink : LinkKind::Pcie;
                p.nvlinks = r.links;
                p.switch_nvlinks = r.switch_links;
            } else if (nvml) {
                t.link_source = link_why.empty() ? "cuDeviceGetPCIBusId failed" : link_why;
            }
            t.pairs.push_back(p);
        }
    return t;
}

#else

GpuTopology measure(const std::vector<int>&, vgpu::BackendChoice backend) {
    GpuTopology t;
    t.host_backend = backend == vgpu::BackendChoice::Auto;
    t.why = "this VMM was built without cuda.h";
    return t;
}

#endif

} // namespace

GpuTopology probe_topology(const std::vector<int>& gpus, vgpu::BackendChoice backend) {
    if (backend == vgpu::BackendChoice::Host) {
        GpuTopology t;
        t.host_backend = true;
        t.why = "--vgpu host";
        return t;
    }
    std::string why;
    if (auto t = run_in_child<GpuTopology>("the topology probe's process", kTopologyBoundS,
                                           [&] { return measure(gpus, backend); }, &why))
        return *t;
    GpuTopology t;
    t.why = "the topology probe returned nothing: none (" + why + ")";
    return t;
}

} // namespace kvmgpu::bench
