/* kvmtool-gpu as a library, for C and other languages' bindings: the C++
 * API of kvmgpu/kvmgpu.hpp behind opaque handles. Functions that can fail
 * return 0 on success and -1 on failure (NULL for constructors), and then
 * kvmgpu_last_error() holds one line saying why (per thread, until the
 * thread's next failing call). Enumerations are passed as their names, the
 * CLI's: "auto", "4K", "cuda", "adaptive", ... (docs/embedding.md). */
#ifndef KVMGPU_KVMGPU_H
#define KVMGPU_KVMGPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVMGPU_C_API_VERSION 1

typedef struct kvmgpu_config kvmgpu_config;
typedef struct kvmgpu_vm kvmgpu_vm;

/* How a run ended: kvmgpu::Outcome's order. */
enum kvmgpu_outcome {
    KVMGPU_GUEST_EXIT, KVMGPU_TIMEOUT, KVMGPU_GUEST_FAULT, KVMGPU_TRIPLE_FAULT, KVMGPU_HALTED,
    KVMGPU_ENTRY_FAILED, KVMGPU_INTERNAL_ERROR, KVMGPU_UNEXPECTED, KVMGPU_BAD_REQUEST, KVMGPU_INTERRUPTED
};

typedef struct kvmgpu_result {
    int outcome;        /* enum kvmgpu_outcome */
    uint32_t exit_code;
    int passed;         /* the guest exited with code 0 */
    uint64_t setup_ns, first_instruction_ns, main_ns, run_ns, prefault_ns;
    uint64_t exits;
    char detail[256];   /* one line, cut to fit */
} kvmgpu_result;

typedef struct kvmgpu_vgpu_counters {
    uint64_t commands, errors;
    uint64_t bytes_htod, bytes_dtoh, bytes_dtod;
    uint64_t ram_registered_bytes, ram_register_ns;
} kvmgpu_vgpu_counters;

const char* kvmgpu_last_error(void);
const char* kvmgpu_outcome_name(int outcome);
/* kvmgpu::prepare_process() and set_vms_in_process(). */
void kvmgpu_prepare_process(void);
void kvmgpu_set_vms_in_process(unsigned vms);

/* A configuration: `guest` is an ELF path or a built guest's name. */
kvmgpu_config* kvmgpu_config_new(const char* guest);
void kvmgpu_config_free(kvmgpu_config* c);
int kvmgpu_config_set_ram(kvmgpu_config* c, uint64_t bytes);
int kvmgpu_config_set_pages(kvmgpu_config* c, const char* pages); /* auto, 4K, 2M, 1G */
int kvmgpu_config_set_timeout(kvmgpu_config* c, double seconds);
int kvmgpu_config_set_seed(kvmgpu_config* c, uint64_t seed);
int kvmgpu_config_set_cmdline(kvmgpu_config* c, const char* cmdline);
int kvmgpu_config_add_arg(kvmgpu_config* c, const char* arg);
int kvmgpu_config_add_env(kvmgpu_config* c, const char* key_value);
int kvmgpu_config_set_root(kvmgpu_config* c, const char* dir);
/* guest_path may be NULL (the default place). */
int kvmgpu_config_add_share(kvmgpu_config* c, const char* host_dir, const char* guest_path, int read_only);
/* "raw": a Linux-ABI guest's stdin, stdout and stderr are this process's
 * descriptors 0-2, bytes unchanged; "console" (the default): stdin empty,
 * output as console lines. */
int kvmgpu_config_set_stdio(kvmgpu_config* c, const char* stdio);
/* Each guest console line (not NUL-terminated), on the vCPU's thread; NULL: stdout. */
int kvmgpu_config_set_console(kvmgpu_config* c, void (*line)(const char* text, size_t len, void* user), void* user);
/* A vGPU: backend auto, cuda or host; its devices on the `count` GPU ordinals
 * `gpus` (NULL, 0: GPU 0). */
int kvmgpu_config_set_vgpu(kvmgpu_config* c, const char* backend, const int* gpus, size_t count);
int kvmgpu_config_set_vgpu_quota(kvmgpu_config* c, uint64_t device_mem_bytes);
int kvmgpu_config_set_doorbell(kvmgpu_config* c, const char* doorbell); /* adaptive, trap, ioeventfd, poll */
int kvmgpu_config_set_gpu_worker(kvmgpu_config* c, const char* worker); /* process, inline, always */
/* contexts, or mps (starting an MPS daemon for this VM's vGPU, stopped with it). */
int kvmgpu_config_set_gpu_sharing(kvmgpu_config* c, const char* sharing);

/* Builds the VM (the configuration may be freed after). */
kvmgpu_vm* kvmgpu_vm_create(const kvmgpu_config* c);
int kvmgpu_vm_run(kvmgpu_vm* vm, kvmgpu_result* out);
int kvmgpu_vm_start(kvmgpu_vm* vm);
int kvmgpu_vm_wait(kvmgpu_vm* vm, kvmgpu_result* out);
void kvmgpu_vm_stop(kvmgpu_vm* vm); /* any thread */
int kvmgpu_vm_vgpu_counters(const kvmgpu_vm* vm, kvmgpu_vgpu_counters* out);
void kvmgpu_vm_destroy(kvmgpu_vm* vm);

#ifdef __cplusplus
}
#endif

#endif
