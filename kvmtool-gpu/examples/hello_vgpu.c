/* The same as hello_vgpu.cpp through the C API.
 *   hello_vgpu_c <guest ELF or name> [guest arguments...] */
#include <stdio.h>

#include <kvmgpu/kvmgpu.h>

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <guest> [args...]\n", argv[0]);
        return 2;
    }
    kvmgpu_prepare_process();
    kvmgpu_config* cfg = kvmgpu_config_new(argv[1]);
    for (int i = 2; cfg && i < argc; ++i) kvmgpu_config_add_arg(cfg, argv[i]);
    if (!cfg || kvmgpu_config_set_vgpu(cfg, "auto", NULL, 0) != 0) {
        fprintf(stderr, "hello_vgpu_c: %s\n", kvmgpu_last_error());
        return 2;
    }
    kvmgpu_vm* vm = kvmgpu_vm_create(cfg);
    kvmgpu_config_free(cfg);
    kvmgpu_result r;
    kvmgpu_vgpu_counters c;
    if (!vm || kvmgpu_vm_run(vm, &r) != 0 || kvmgpu_vm_vgpu_counters(vm, &c) != 0) {
        fprintf(stderr, "hello_vgpu_c: %s\n", kvmgpu_last_error());
        kvmgpu_vm_destroy(vm);
        return 2;
    }
    printf("result: %s, exit code %u; vGPU: %llu commands, %llu errors\n", kvmgpu_outcome_name(r.outcome),
           r.exit_code, (unsigned long long)c.commands, (unsigned long long)c.errors);
    kvmgpu_vm_destroy(vm);
    return r.passed ? 0 : 1;
}
