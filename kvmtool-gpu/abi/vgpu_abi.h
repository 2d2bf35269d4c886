/* The vGPU contract between guest-stub/ (producer) and the VMM's device
 * model (consumer): MMIO registers, the command ring in guest RAM, command
 * descriptors, completion records and status codes; the opcodes are in
 * vgpu_ops.h.
 *
 * Freestanding-safe. Status codes are CUresult values, one to one; the host
 * side static_asserts that against cuda.h. VGPU_ABI_VERSION, its history
 * and the layout hash are in vgpu_ops.h, beside the opcode table. */
#ifndef KVMGPU_ABI_VGPU_ABI_H
#define KVMGPU_ABI_VGPU_ABI_H

#include <stdint.h>

#define VGPU_MAGIC 0x55504756u /* "VGPU" */

/* ---- MMIO registers (offsets from KVMGPU_VGPU_GPA) -------------------- */
#define VGPU_REG_MAGIC 0x00u     /* u32 RO */
#define VGPU_REG_VERSION 0x04u   /* u32 RO */
#define VGPU_REG_FEATURES 0x08u  /* u64 RO: VGPU_FEATURE_* */
#define VGPU_REG_RING_GPA 0x10u  /* u64 RW: ring base, 4 KiB aligned */
#define VGPU_REG_RING_SIZE 0x18u /* u32 RW: entries, power of two */
#define VGPU_REG_CONTROL 0x1Cu   /* u32 WO: VGPU_CONTROL_* */
#define VGPU_REG_STATUS 0x20u    /* u32 RO: VGPU_STATUS_* */
#define VGPU_REG_ERROR 0x24u     /* u32 RO: last device-level error (a status) */
#define VGPU_REG_BACKEND 0x28u   /* u32 RO: VGPU_BACKEND_* */
#define VGPU_REG_DOORBELL_MODE 0x2Cu /* u32 RO: VGPU_DOORBELL_* chosen by the VMM */
#define VGPU_REG_MAX_RING 0x30u  /* u32 RO: largest ring the VMM accepts */
/* The doorbell sits on the second page: any 4-byte write there is a kick;
 * the device then reads ring->producer from guest RAM. */
#define VGPU_DOORBELL_OFFSET 0x1000u

#define VGPU_FEATURE_SCATTER_GATHER (1ull << 0)
#define VGPU_FEATURE_ZERO_COPY (1ull << 1) /* guest RAM is device-mapped */
#define VGPU_FEATURE_REAL_KERNELS (1ull << 2) /* off: CPU reference kernels only */

#define VGPU_CONTROL_ENABLE 0x1u /* validate RING_GPA/RING_SIZE and start */
#define VGPU_CONTROL_RESET 0x2u  /* stop, drop every handle, back to disabled */

#define VGPU_STATUS_ENABLED 0x1u
#define VGPU_STATUS_BROKEN 0x2u /* ring state impossible; reset to recover */

#define VGPU_BACKEND_HOST 1u /* host memory + CPU reference kernels */
#define VGPU_BACKEND_CUDA 2u /* real CUDA Driver API */

#define VGPU_DOORBELL_TRAP 0u      /* MMIO exit handled on the vCPU thread */
#define VGPU_DOORBELL_IOEVENTFD 1u /* KVM signals an eventfd; vCPU stays in */
#define VGPU_DOORBELL_POLL 2u      /* the consumer polls ring->producer; the guest never kicks */
#define VGPU_DOORBELL_ADAPTIVE 3u  /* the consumer polls while commands come, then sleeps; the kick
                                      (an ioeventfd) wakes it (see the event index below) */

/* ---- the ring in guest RAM --------------------------------------------
 * Layout at RING_GPA, N = RING_SIZE entries:
 *   struct vgpu_ring_header                   (128 bytes)
 *   struct vgpu_command    commands[N]        (64 bytes each)
 *   struct vgpu_completion completions[N]     (32 bytes each)
 *   uint8_t                payloads[N][VGPU_PAYLOAD_BYTES]
 * Slot i = index % N. The guest owns producer; the device owns consumer.
 * The device processes at most N commands per pass and treats
 * producer - consumer > N as a broken ring. */
#define VGPU_MIN_RING 8u
#define VGPU_DEFAULT_MAX_RING 4096u
#define VGPU_PAYLOAD_BYTES 448u

struct vgpu_ring_header {
    volatile uint32_t producer; /* guest: commands published (free-running) */
    uint32_t reserved0[15];
    volatile uint32_t consumer; /* device: commands finished (free-running) */
    volatile uint32_t kick_event; /* device: kick when the command at this index is published */
    volatile uint32_t consumer_state; /* device: VGPU_CONSUMER_* (informational) */
    uint32_t reserved1[13];
};

/* Notification suppression with an event index (as virtio's
 * VIRTIO_RING_F_EVENT_IDX avail_event). The consumer, about to sleep with
 * every command before index E done, stores kick_event = E and
 * consumer_state = SLEEPING, makes a full barrier, looks at producer once
 * more and sleeps only if it is still E. The guest, having published
 * producer = new (the last kick decision was at producer = old), makes a
 * full barrier, reads kick_event and rings the doorbell only if
 * vgpu_need_kick(kick_event, new, old): the published range [old, new)
 * holds E. Either side's barrier sees the other's store, so no wake-up is
 * lost. While the consumer polls it leaves kick_event behind the producer,
 * and the guest does not kick. The device never reads these words back. */
#define VGPU_CONSUMER_POLLING 0u
#define VGPU_CONSUMER_SLEEPING 1u
static inline int vgpu_need_kick(uint32_t event, uint32_t new_idx, uint32_t old_idx)
{
    return (uint32_t)(new_idx - event - 1u) < (uint32_t)(new_idx - old_idx); /* free-running: wraps by design */
}

struct vgpu_command {
    uint16_t opcode;      /* VGPU_OP_* */
    uint16_t flags;       /* VGPU_CMD_FLAG_* */
    uint32_t payload_len; /* bytes used in this slot's payload */
    uint64_t seq;         /* guest's sequence number, echoed in the completion */
    uint64_t arg[6];
};

struct vgpu_completion {
    volatile uint64_t seq; /* written last: equals command seq when done */
    uint32_t status;       /* a vgpu_status (CUresult value) */
    uint32_t reserved;
    uint64_t result[2];
};

#define VGPU_CMD_FLAG_ASYNC 0x1u /* enqueue on the stream; do not synchronize */
#define VGPU_CMD_FLAG_COOPERATIVE 0x2u /* launches only: cuLaunchCooperativeKernel */
/* Launches only: the payload starts with a vgpu_launch_cluster and the
 * parameter buffer (or its gpa) follows it, so VGPU_LAUNCH_CLUSTER_BYTES
 * less of the buffer fits in the slot. */
#define VGPU_CMD_FLAG_CLUSTER 0x4u

static inline uint64_t vgpu_ring_bytes(uint32_t entries)
{
    return 128u + (uint64_t)entries * (64u + 32u + VGPU_PAYLOAD_BYTES);
}
/* The launch dimensions every CUDA GPU since compute capability 3.0 accepts
 * (zero aside, which callers check): block x, y <= 1024, z <= 64,
 * x*y*z <= 1024; grid x < 2^31, y, z <= 65535. Each dimension is checked
 * before the product, so no value can wrap it. The VMM checks every launch
 * and kernel node against it, every backend's launches again
 * (GpuBackend::launch, launch_packed); the guest library checks it too, to
 * refuse at the call. */
static inline int vgpu_launch_dims_ok(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz)
{
    if (bx > 1024 || by > 1024 || bz > 64) return 0;
    if ((uint64_t)bx * by * bz > 1024) return 0; /* each <= 2^10: no wrap */
    return gx <= 0x7fffffffu && gy <= 65535 && gz <= 65535;
}
static inline uint64_t vgpu_command_offset(uint32_t slot) { return 128u + (uint64_t)slot * 64u; }
static inline uint64_t vgpu_completion_offset(uint32_t entries, uint32_t slot)
{
    return 128u + (uint64_t)entries * 64u + (uint64_t)slot * 32u;
}
static inline uint64_t vgpu_payload_offset(uint32_t entries, uint32_t slot)
{
    return 128u + (uint64_t)entries * 96u + (uint64_t)slot * VGPU_PAYLOAD_BYTES;
}

/* LAUNCH_KERNEL_PACKED's and the kernel-node opcodes' arg[]: grid x and y
 * share arg2, grid z and block x arg3, block y and z arg4, the dynamic
 * shared bytes and the parameter buffer's bytes arg5 (each pair low half
 * first, x86 being little-endian). */
struct vgpu_launch_args {
    uint64_t function;
    uint64_t stream;
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_bytes;
    uint32_t params; /* the parameter buffer's bytes */
};

/* A launch's thread-block cluster (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
 * and its CUclusterSchedulingPolicy (0: the default). Every dimension is
 * at least 1 and each divides the grid's; the driver judges the size. */
struct vgpu_launch_cluster {
    uint32_t dim[3];
    uint32_t scheduling;
};
#define VGPU_LAUNCH_CLUSTER_BYTES 16u
/* Clusters past this many blocks are refused before the driver sees them
 * (Hopper's largest is 16). */
#define VGPU_MAX_CLUSTER_BLOCKS 64u

/* Scatter-gather list entry (array in guest RAM). */
struct vgpu_sg_entry {
    uint64_t gpa;
    uint64_t len;
};
#define VGPU_MAX_SG_ENTRIES (1u << 20)

/* One kernel parameter's place in its parameter buffer (FUNC_GET_PARAM_INFO). */
struct vgpu_param_desc {
    uint16_t offset;
    uint16_t size;
};
/* The driver's limit on a kernel's parameter buffer (CUDA 12.1 and later). */
#define VGPU_MAX_PARAM_BYTES 32764u
/* The longest kernel or variable name a module look-up takes. */
#define VGPU_MAX_NAME_BYTES 32764u

/* ---- opcodes: vgpu_ops.h, one row each (number, facts, typed arguments
 * and results) ------------------------------------------------------------
 * Handles (context, module, function, stream, event, ...) are VM-local
 * numbers issued by the device, never host pointers.
 *
 * Contexts: a VM has one current context, as one thread has in the driver
 * (a guest with threads keeps a stack per thread and sends its own before
 * a thread's call when another thread's is current). A VM starts with device 0's primary context current (not
 * retained), so a guest that never names a context works in it;
 * CTX_SET_CURRENT 0 leaves none current, and then every command that needs
 * a context (VGPU_OPF_CTX: memory, modules, launches, streams, events, synchronize)
 * fails with VGPU_ERROR_INVALID_CONTEXT. Modules, functions, streams and
 * events belong to the context they were made in and are refused
 * (VGPU_ERROR_INVALID_HANDLE) while another is current; device memory is
 * the VM's in every context (unified addressing) but is freed with the
 * context it was allocated in. */
#include "kvmtool-gpu/abi/vgpu_ops.h"

/* Graphs: a graph, a graph exec and a node are VM handles owned by the
 * context they were made in, as streams are; a node's handle goes with its
 * graph. A node is made with the dependencies GRAPH_NEXT_NODE_DEPENDENCIES
 * gave just before (GRAPH_DEPENDENCIES adds and removes edges later). Kernel nodes are checked as LAUNCH_KERNEL_PACKED is (the
 * function's layout, the dimensions). Copy nodes name guest RAM by
 * guest-physical address (registered with the device for the VM's life, so
 * the node stays valid) or device ranges of this VM. Stream capture records
 * the capturing stream's launches, copies and memsets as the backend does
 * (on CUDA, the driver's capture); scatter-gather copies are refused on a
 * capturing stream (their staging would not outlive the call). A guest host
 * function has no node in the device's graph: the guest runs it itself.
 * Nodes a VM holds (in graphs, captures and execs) are bounded
 * (OUT_OF_MEMORY past VgpuOptions::max_graph_nodes). */
#define VGPU_GRAPH_EDGES_PER_CALL (VGPU_PAYLOAD_BYTES / 16u)
#define VGPU_GRAPH_NODES_PER_CALL (VGPU_PAYLOAD_BYTES / 8u)
/* GRAPH_EDGES' kinds: the graph's edges (handle = a graph); a node's
 * dependencies (edges into it) or dependents (edges out of it) (handle = a
 * node); the graph's root nodes, as pairs {0, root} (handle = a graph).
 * Edges in the order the device's graph lists them; roots in GET_NODES'
 * order. */
#define VGPU_GRAPH_EDGES_ALL 0u
#define VGPU_GRAPH_EDGES_INTO 1u
#define VGPU_GRAPH_EDGES_FROM 2u
#define VGPU_GRAPH_EDGES_ROOTS 3u

/* STREAM_SET/GET_ATTRIBUTE's attributes: the CUlaunchAttributeID numbers a
 * stream takes, but priority (the guest's range is [0, 0]: the guest
 * library keeps it). The window's range must be the VM's device memory, on
 * the context's device; its hitRatio in [0, 1]. PERSISTING is forwarded:
 * no L2 is set aside for it (PERSISTING_L2_CACHE_SIZE is a hint, below),
 * so its lines are held as NORMAL ones. The other attributes that streams
 * take (NVLINK_UTIL_CENTRIC_SCHEDULING): NOT_SUPPORTED; launch- and
 * node-only ones and unknown numbers: INVALID_VALUE. */
#define VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW 1u
#define VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY 3u
#define VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP 9u
#define VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN 10u
#define VGPU_STREAM_ATTR_NVLINK_UTIL_CENTRIC_SCHEDULING 16u

/* The payload of the kernel-node opcodes: the parameter buffer inline when
 * it fits, else its guest-physical address (in guest RAM). */
struct vgpu_graph_kernel_payload {
    uint64_t exec; /* EXEC_KERNEL_NODE_SET_PARAMS: the graph exec; else 0 */
    uint8_t params[VGPU_PAYLOAD_BYTES - 8]; /* the buffer, or its gpa (uint64) when larger */
};

/* CTX_LIMIT's limits (CUlimit numbers). STACK_SIZE, PRINTF_FIFO_SIZE and
 * MALLOC_HEAP_SIZE make the driver reserve device memory: the VMM counts it
 * against the VM's quota (the stack: the value times every thread the
 * device can hold at once) and refuses a value past it with OUT_OF_MEMORY.
 * PERSISTING_L2_CACHE_SIZE sets aside L2 of a GPU other VMs share: kept as
 * a hint (reported back, up to the device's maximum), never forwarded.
 * SHMEM_SIZE, CIG_ENABLED and CIG_SHMEM_FALLBACK_ENABLED describe a context
 * made for CUDA-in-graphics, which a VM's context never is: read as the
 * driver answers them, never set (VGPU_ERROR_UNSUPPORTED_LIMIT).
 * Other limits: VGPU_ERROR_UNSUPPORTED_LIMIT. RESET gives every limit its
 * start value back. */
#define VGPU_LIMIT_STACK_SIZE 0x00u
#define VGPU_LIMIT_PRINTF_FIFO_SIZE 0x01u
#define VGPU_LIMIT_MALLOC_HEAP_SIZE 0x02u
#define VGPU_LIMIT_DEV_RUNTIME_SYNC_DEPTH 0x03u
#define VGPU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT 0x04u
#define VGPU_LIMIT_MAX_L2_FETCH_GRANULARITY 0x05u
#define VGPU_LIMIT_PERSISTING_L2_CACHE_SIZE 0x06u
#define VGPU_LIMIT_SHMEM_SIZE 0x07u
#define VGPU_LIMIT_CIG_ENABLED 0x08u
#define VGPU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED 0x09u
#define VGPU_LIMIT_COUNT_ 0x0au

/* RAND_GENERATE's kinds: curandGenerate (32-bit words),
 * curandGenerateUniform/Normal and their Double forms. A normal kind needs
 * an even count (cuRAND's rule for pseudo-random generators). */
#define VGPU_RAND_BITS 0u
#define VGPU_RAND_UNIFORM 1u
#define VGPU_RAND_NORMAL 2u
#define VGPU_RAND_UNIFORM_DOUBLE 3u
#define VGPU_RAND_NORMAL_DOUBLE 4u
#define VGPU_RAND_LONG_LONG 5u /* curandGenerateLongLong: 64-bit Sobol generators only */
#define VGPU_RAND_LOG_NORMAL 6u
#define VGPU_RAND_LOG_NORMAL_DOUBLE 7u
#define VGPU_RAND_KIND_COUNT_ 8u
/* Quasi-random generators (curandRngType_t 200..204): dimensions 1..20000
 * (cuRAND's tables); a generation's count is a multiple of them. */
#define VGPU_RAND_MAX_DIMENSIONS 20000u
/* RAND_GET_TABLE's tables: the four curandDirectionVectorSet_t values
 * (101..104: 32-bit, scrambled 32-bit, 64-bit, scrambled 64-bit direction
 * vectors, 20000 x 32 or 64 words) and the scramble constants (20000 words). */
#define VGPU_RAND_TABLE_SCRAMBLE_32 1u
#define VGPU_RAND_TABLE_SCRAMBLE_64 2u

/* FFT_PLAN_MANY's payload: cufftMakePlanMany64's arguments. With
 * VGPU_FFT_ADVANCED the layout is inembed/stride/dist (cuFFT's advanced
 * data layout; inembed[0] and onembed[0] are not used), else the basic one
 * (strides and distances ignored, as cuFFT ignores them). */
#define VGPU_FFT_ADVANCED 1u
#define VGPU_FFT_NO_AUTO_ALLOCATION 2u /* cufftSetAutoAllocation(plan, 0): the program gives the work area */
struct vgpu_fft_plan_many {
    uint32_t rank; /* 1..3 */
    uint32_t type; /* cufftType */
    int64_t n[3];
    int64_t inembed[3];
    int64_t istride, idist;
    int64_t onembed[3];
    int64_t ostride, odist;
    int64_t batch;
    uint32_t flags; /* VGPU_FFT_* */
    uint32_t reserved; /* 0 */
};

/* How the VMM moves a scatter-gather transfer (arg4 of the _SG opcodes).
 * arg5 is the sum of the list's lengths as the guest computed it, or 0 for
 * "not given". The VMM-translated strategies (1..5) read the list on the
 * host and refuse a nonzero arg5 that does not match. DEVICE_WALK needs
 * arg5: the VMM does O(1) work and the GPU itself reads the list out of
 * guest RAM, checks every entry and the sum, and copies nothing if either
 * is wrong. Being asynchronous, that refusal is reported by the next
 * synchronize (stream, event or context) as VGPU_ERROR_INVALID_VALUE, as
 * CUDA reports a failed asynchronous operation. AUTO picks BATCH when
 * arg5 / arg2 (the entries' average length) is large enough for the copy
 * engine to win (the CUDA backend: 512 KiB, e.g. 2 MiB guest pages), else
 * DEVICE_WALK where the backend has it and arg5 is given. As with the bytes of any
 * asynchronous copy, the guest keeps a walked list unchanged until the
 * copy has run (a stream or context synchronize): the device may read it
 * any time before then, also after the command's completion is written. */
/* VGPU_OP_VMM_SET_ACCESS flags: CUmemAccess_flags' values. */
enum vgpu_vmm_access {
    VGPU_VMM_ACCESS_NONE = 0,
    VGPU_VMM_ACCESS_READ = 1,
    VGPU_VMM_ACCESS_READWRITE = 3,
};

enum vgpu_sg_strategy {
    VGPU_SG_AUTO = 0,          /* the VMM picks (device walk where it can, above) */
    VGPU_SG_PER_CHUNK = 1,     /* one async copy per entry */
    VGPU_SG_COALESCE = 2,      /* merge host-contiguous runs, then per run */
    VGPU_SG_BOUNCE = 3,        /* GViM 1-copy: the VMM packs the pages into pinned staging, then DMA */
    VGPU_SG_BATCH = 4,         /* cuMemcpyBatchAsync */
    VGPU_SG_GATHER_KERNEL = 5, /* GPU kernel reads guest RAM via zero-copy mapping */
    VGPU_SG_DEVICE_WALK = 6,   /* the GPU reads and checks the list itself (zero-copy) */
    VGPU_SG_STRATEGY_COUNT_ = 7
};

/* Status codes: exactly CUresult's values for the ones the vGPU returns. */
enum vgpu_status {
    VGPU_SUCCESS = 0,
    VGPU_ERROR_INVALID_VALUE = 1,
    VGPU_ERROR_OUT_OF_MEMORY = 2,
    VGPU_ERROR_NOT_INITIALIZED = 3,
    VGPU_ERROR_NO_DEVICE = 100,
    VGPU_ERROR_INVALID_DEVICE = 101,
    VGPU_ERROR_INVALID_IMAGE = 200,
    VGPU_ERROR_INVALID_CONTEXT = 201,
    VGPU_ERROR_UNSUPPORTED_LIMIT = 215,
    VGPU_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    VGPU_ERROR_INVALID_HANDLE = 400,
    VGPU_ERROR_ILLEGAL_STATE = 401, /* guest-detected: the ring is broken; from the device only as the driver's
                                       answer to a capture call in the wrong state (e.g. END on a stream that
                                       does not capture) */
    VGPU_ERROR_NOT_FOUND = 500,
    VGPU_ERROR_NOT_READY = 600,
    VGPU_ERROR_ILLEGAL_ADDRESS = 700,
    VGPU_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    VGPU_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    VGPU_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
    VGPU_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
    VGPU_ERROR_LAUNCH_FAILED = 719,
    VGPU_ERROR_NOT_SUPPORTED = 801,
    VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    VGPU_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    VGPU_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
    VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
    VGPU_ERROR_INVALID_CLUSTER_SIZE = 912,
    VGPU_ERROR_TIMEOUT = 909, /* guest-detected: no completion in time (never sent by the device) */
    VGPU_ERROR_UNKNOWN = 999
};

#include "kvmtool-gpu/abi/vgpu_array_abi.h"

#ifdef __cplusplus
static_assert(sizeof(struct vgpu_ring_header) == 128, "ring header");
static_assert(__builtin_offsetof(struct vgpu_ring_header, consumer) == 64, "own cache line");
static_assert(__builtin_offsetof(struct vgpu_ring_header, kick_event) == 68, "event index beside the consumer");
static_assert(__builtin_offsetof(struct vgpu_ring_header, consumer_state) == 72, "consumer state");
static_assert(sizeof(struct vgpu_command) == 64, "command descriptor");
static_assert(sizeof(struct vgpu_completion) == 32, "completion record");
static_assert(sizeof(struct vgpu_sg_entry) == 16, "sg entry");
static_assert(sizeof(struct vgpu_launch_args) == sizeof(((struct vgpu_command*)0)->arg), "launch args fill arg[]");
static_assert(__builtin_offsetof(struct vgpu_launch_args, grid) == 2 * 8, "grid x, y in arg2");
static_assert(__builtin_offsetof(struct vgpu_launch_args, block) == 3 * 8 + 4, "block x in arg3's high half");
static_assert(__builtin_offsetof(struct vgpu_launch_args, shared_bytes) == 5 * 8, "sharedMem in arg5's low half");
static_assert(__builtin_offsetof(struct vgpu_launch_args, params) == 5 * 8 + 4, "params in arg5's high half");
static_assert(sizeof(struct vgpu_param_desc) == 4, "param desc");
static_assert(sizeof(struct vgpu_launch_cluster) == VGPU_LAUNCH_CLUSTER_BYTES, "cluster header");
static_assert(sizeof(struct vgpu_graph_kernel_payload) == VGPU_PAYLOAD_BYTES, "kernel node payload fills a slot");
static_assert(sizeof(struct vgpu_args_stream_attribute) == sizeof(((struct vgpu_command*)0)->arg), "fills arg[]");
#endif

#endif
