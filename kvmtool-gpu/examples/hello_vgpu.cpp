// Boots a guest with a vGPU, runs it and prints its vGPU counters.
//   hello_vgpu <guest ELF or name> [guest arguments...]
#include <cstdio>

#include <kvmgpu/kvmgpu.hpp>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <guest> [args...]\n", argv[0]);
        return 2;
    }
    kvmgpu::prepare_process();
    try {
        kvmgpu::VmConfig cfg;
        cfg.guest = argv[1];
        cfg.args.assign(argv + 2, argv + argc);
        cfg.vgpu = kvmgpu::VgpuSpec{}; // GPU 0, CUDA where there is one, else the host backend
        kvmgpu::Machine vm(cfg);
        const kvmgpu::Result r = vm.run();
        const kvmgpu::VgpuCounters c = vm.vgpu_counters();
        std::printf("result: %s, exit code %u; vGPU %s: %llu commands, %llu errors, %llu bytes to the GPU, "
                    "%llu back\n",
                    kvmgpu::to_string(r.outcome), r.exit_code, vm.vgpu_status().backend.c_str(),
                    (unsigned long long)c.commands, (unsigned long long)c.errors,
                    (unsigned long long)c.bytes_htod, (unsigned long long)c.bytes_dtoh);
        return r.passed() ? 0 : 1;
    } catch (const kvmgpu::Error& e) {
        std::fprintf(stderr, "hello_vgpu: %s\n", e.what());
        return 2;
    }
}
