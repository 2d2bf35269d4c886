// A small experiment on the API: the same guest on 4K, 2M and 1G host pages,
// its boot time and run time and what it printed about bandwidth.
//   page_sweep <guest, e.g. bandwidth or boot_exit> [reps]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <kvmgpu/kvmgpu.hpp>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <guest> [reps]\n", argv[0]);
        return 2;
    }
    const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
    kvmgpu::prepare_process();
    const std::pair<kvmgpu::PageSize, const char*> sizes[] = {
        {kvmgpu::PageSize::k4K, "4K"}, {kvmgpu::PageSize::k2M, "2M"}, {kvmgpu::PageSize::k1G, "1G"}};
    std::printf("%-5s %4s %18s %12s  %s\n", "pages", "rep", "first instr (ms)", "run (ms)", "guest's last line");
    for (const auto& [size, name] : sizes) {
        for (int rep = 0; rep < reps; ++rep) {
            std::string last;
            kvmgpu::VmConfig cfg;
            cfg.guest = argv[1];
            cfg.ram_bytes = 1ull << 30;
            cfg.pages = size;
            cfg.vgpu = kvmgpu::VgpuSpec{};
            cfg.console = [&last](std::string_view line) { last = line; };
            try {
                kvmgpu::Machine vm(cfg);
                const kvmgpu::Result r = vm.run();
                std::printf("%-5s %4d %18.3f %12.3f  %s%s\n", name, rep, r.timings.first_instruction_ns * 1e-6,
                            r.timings.run_ns * 1e-6, r.passed() ? "" : "FAILED: ", last.c_str());
            } catch (const kvmgpu::Error& e) { // e.g. no 1G pages reserved
                std::printf("%-5s %4d  skipped: %s\n", name, rep, e.what());
                break;
            }
        }
    }
}
