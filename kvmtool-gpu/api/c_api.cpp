// The C API (include/kvmgpu/kvmgpu.h): handles over kvmgpu::VmConfig and
// kvmgpu::Machine; every C++ exception becomes -1 (or NULL) and the
// thread's last-error line.
#include "kvmgpu/kvmgpu.h"

#include <strings.h>

#include <cstring>
#include <string>

#include "kvmgpu/kvmgpu.hpp"

struct kvmgpu_config {
    kvmgpu::VmConfig cfg;
};
struct kvmgpu_vm {
    kvmgpu::Machine machine;
};

namespace {

thread_local std::string last_error;

// Runs `f`, turning an exception into -1 and the last-error line.
template <class F>
int guarded(F&& f) {
    try {
        f();
        return 0;
    } catch (const std::exception& e) {
        last_error = e.what();
    } catch (...) {
        last_error = "unknown error";
    }
    return -1;
}

// A name the C API takes for an enumeration value: its index in `names`.
template <class E, size_t N>
E pick(const char* given, const char* const (&names)[N], const char* what) {
    const std::string s = given ? given : "";
    for (size_t i = 0; i < N; ++i)
        if (strcasecmp(s.c_str(), names[i]) == 0) return static_cast<E>(i);
    std::string expected;
    for (size_t i = 0; i < N; ++i) expected += (i ? (i + 1 == N ? " or " : ", ") : "") + std::string(names[i]);
    throw kvmgpu::Error(std::string(what) + " '" + s + "': expected " + expected);
}

kvmgpu::VgpuSpec& vgpu_of(kvmgpu_config* c) {
    if (!c->cfg.vgpu) throw kvmgpu::Error("no vGPU configured: call kvmgpu_config_set_vgpu first");
    return *c->cfg.vgpu;
}

void fill(const kvmgpu::Result& r, kvmgpu_result* out) {
    *out = {};
    out->outcome = static_cast<int>(r.outcome);
    out->exit_code = r.exit_code;
    out->passed = r.passed();
    out->setup_ns = r.timings.setup_ns;
    out->first_instruction_ns = r.timings.first_instruction_ns;
    out->main_ns = r.timings.main_ns;
    out->run_ns = r.timings.run_ns;
    out->prefault_ns = r.timings.prefault_ns;
    out->exits = r.exits;
    std::strncpy(out->detail, r.detail.c_str(), sizeof out->detail - 1);
}

constexpr const char* kPages[] = {"auto", "4K", "2M", "1G"};
constexpr const char* kBackends[] = {"auto", "cuda", "host"};
constexpr const char* kWorkers[] = {"process", "inline", "always"};
constexpr const char* kDoorbells[] = {"adaptive", "trap", "ioeventfd", "poll"};
constexpr const char* kSharing[] = {"contexts", "mps"};

} // namespace

extern "C" {

const char* kvmgpu_last_error(void) { return last_error.c_str(); }

const char* kvmgpu_outcome_name(int outcome) {
    if (outcome < KVMGPU_GUEST_EXIT || outcome > KVMGPU_INTERRUPTED) return "?";
    return kvmgpu::to_string(static_cast<kvmgpu::Outcome>(outcome));
}

void kvmgpu_prepare_process(void) { kvmgpu::prepare_process(); }
void kvmgpu_set_vms_in_process(unsigned vms) { kvmgpu::set_vms_in_process(vms); }

kvmgpu_config* kvmgpu_config_new(const char* guest) {
    kvmgpu_config* c = nullptr;
    guarded([&] {
        if (!guest) throw kvmgpu::Error("kvmgpu_config_new: no guest");
        c = new kvmgpu_config;
        c->cfg.guest = guest;
    });
    return c;
}

void kvmgpu_config_free(kvmgpu_config* c) { delete c; }

int kvmgpu_config_set_ram(kvmgpu_config* c, uint64_t bytes) {
    return guarded([&] { c->cfg.ram_bytes = bytes; });
}
int kvmgpu_config_set_pages(kvmgpu_config* c, const char* pages) {
    return guarded([&] { c->cfg.pages = pick<kvmgpu::PageSize>(pages, kPages, "pages"); });
}
int kvmgpu_config_set_timeout(kvmgpu_config* c, double seconds) {
    return guarded([&] { c->cfg.timeout_s = seconds; });
}
int kvmgpu_config_set_seed(kvmgpu_config* c, uint64_t seed) {
    return guarded([&] { c->cfg.seed = seed; });
}
int kvmgpu_config_set_cmdline(kvmgpu_config* c, const char* cmdline) {
    return guarded([&] { c->cfg.cmdline = cmdline ? cmdline : ""; });
}
int kvmgpu_config_add_arg(kvmgpu_config* c, const char* arg) {
    return guarded([&] { c->cfg.args.push_back(arg ? arg : ""); });
}
int kvmgpu_config_add_env(kvmgpu_config* c, const char* key_value) {
    return guarded([&] {
        const std::string kv = key_value ? key_value : "";
        if (kv.find('=') == std::string::npos || kv.front() == '=')
            throw kvmgpu::Error("env: expected K=V, got '" + kv + "'");
        c->cfg.env.push_back(kv);
    });
}
int kvmgpu_config_set_root(kvmgpu_config* c, const char* dir) {
    return guarded([&] { c->cfg.root = dir ? dir : ""; });
}
int kvmgpu_config_add_share(kvmgpu_config* c, const char* host_dir, const char* guest_path, int read_only) {
    return guarded([&] {
        c->cfg.shares.push_back({host_dir ? host_dir : "", guest_path ? guest_path : "", read_only != 0});
    });
}
int kvmgpu_config_set_stdio(kvmgpu_config* c, const char* stdio) {
    return guarded([&] {
        const std::string s = stdio ? stdio : "";
        if (s != "console" && s != "raw") throw kvmgpu::Error("stdio: expected console or raw, got '" + s + "'");
        c->cfg.raw_stdio = s == "raw";
    });
}
int kvmgpu_config_set_console(kvmgpu_config* c, void (*line)(const char*, size_t, void*), void* user) {
    return guarded([&] {
        if (!line) c->cfg.console = nullptr;
        else c->cfg.console = [line, user](std::string_view text) { line(text.data(), text.size(), user); };
    });
}
int kvmgpu_config_set_vgpu(kvmgpu_config* c, const char* backend, const int* gpus, size_t count) {
    return guarded([&] {
        kvmgpu::VgpuSpec spec = c->cfg.vgpu.value_or(kvmgpu::VgpuSpec{});
        spec.backend = pick<kvmgpu::VgpuBackend>(backend, kBackends, "vgpu backend");
        if (gpus && count) spec.gpus.assign(gpus, gpus + count);
        c->cfg.vgpu = spec;
    });
}
int kvmgpu_config_set_vgpu_quota(kvmgpu_config* c, uint64_t device_mem_bytes) {
    return guarded([&] { vgpu_of(c).device_mem_quota = device_mem_bytes; });
}
int kvmgpu_config_set_doorbell(kvmgpu_config* c, const char* doorbell) {
    return guarded([&] { vgpu_of(c).doorbell = pick<kvmgpu::Doorbell>(doorbell, kDoorbells, "doorbell"); });
}
int kvmgpu_config_set_gpu_worker(kvmgpu_config* c, const char* worker) {
    return guarded([&] { vgpu_of(c).worker = pick<kvmgpu::GpuWorker>(worker, kWorkers, "gpu worker"); });
}
int kvmgpu_config_set_gpu_sharing(kvmgpu_config* c, const char* sharing) {
    return guarded([&] {
        kvmgpu::VgpuSpec& v = vgpu_of(c);
        if (pick<int>(sharing, kSharing, "gpu sharing") == 0) v.sharing = nullptr;
        else v.sharing = kvmgpu::GpuSharing::open_mps({}, v.gpus);
    });
}

kvmgpu_vm* kvmgpu_vm_create(const kvmgpu_config* c) {
    kvmgpu_vm* vm = nullptr;
    guarded([&] {
        if (!c) throw kvmgpu::Error("kvmgpu_vm_create: no configuration");
        vm = new kvmgpu_vm{kvmgpu::Machine(c->cfg)};
    });
    return vm;
}
int kvmgpu_vm_run(kvmgpu_vm* vm, kvmgpu_result* out) {
    return guarded([&] { fill(vm->machine.run(), out); });
}
int kvmgpu_vm_start(kvmgpu_vm* vm) {
    return guarded([&] { vm->machine.start(); });
}
int kvmgpu_vm_wait(kvmgpu_vm* vm, kvmgpu_result* out) {
    return guarded([&] { fill(vm->machine.wait(), out); });
}
void kvmgpu_vm_stop(kvmgpu_vm* vm) { vm->machine.stop(); }
int kvmgpu_vm_vgpu_counters(const kvmgpu_vm* vm, kvmgpu_vgpu_counters* out) {
    return guarded([&] {
        const kvmgpu::VgpuCounters c = vm->machine.vgpu_counters();
        *out = {c.commands, c.errors, c.bytes_htod, c.bytes_dtoh, c.bytes_dtod, c.ram_registered_bytes,
                c.ram_register_ns};
    });
}
void kvmgpu_vm_destroy(kvmgpu_vm* vm) { delete vm; }

} // extern "C"
