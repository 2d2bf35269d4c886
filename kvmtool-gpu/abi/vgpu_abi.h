/* The vGPU contract between guest-stub/ (producer) and the VMM's device
 * model (consumer): MMIO registers, the command ring in guest RAM, command
 * descriptors, completion records and status codes.
 *
 * Freestanding-safe. Status codes are CUresult values, one to one; the host
 * side static_asserts that against cuda.h. Bump VGPU_ABI_VERSION on any
 * change to a layout or meaning below, once, at the merge into main that
 * brings it: branches that each bumped on their own have shared a number.
 *
 * The guest library refuses a device whose VERSION is not its own, so both
 * sides must come from one tree. Versions, and changes made without a bump
 * (so before 7 a number alone does not pin the meaning):
 *   1 registers, ring, first opcodes (b4a6b24)
 *   2 VGPU_SG_DEVICE_WALK (fe512e0)
 *   3 FUNC_GET_PARAM_INFO, LAUNCH_KERNEL_PACKED (061570f); then, unbumped:
 *     STREAM_QUERY, STREAM_WAIT_EVENT, EVENT_QUERY (23a58ee), MEMSET_D16
 *     (0ee456e), FUNC_GET/SET_ATTRIBUTE (1999c93), contexts 60-68,
 *     MODULE_GET_GLOBAL and VGPU_CMD_FLAG_COOPERATIVE (ff64529), peer access
 *     69-71 (2f64af1), AUTO choosing BATCH (463c422), HOST_REGISTER and
 *     HOST_UNREGISTER (d9a068f)
 *   4 on two branches: the event index and ADAPTIVE doorbell (374482f);
 *     FUNC_OCCUPANCY, CTX_LIMIT, DEVICE_P2P_ATTRIBUTE (37814ea)
 *   5 the two 4s merged (a885d34)
 *   6 on three branches: cuBLAS 200-221 (8461202), then cuRAND 300-304 and
 *     cuFFT 320-323 unbumped; arrays and textures 130-138 (4b9030a);
 *     graphs 100-118 (23c221e)
 *   7 the 6s merged (72c77bc, fb508d8, 2c7bb8c)
 *   8 the ninth session's branches merged: LAUNCH_KERNEL (33) retired;
 *     virtual memory management 75-82; cuRAND 305-308, cuFFT 324-325;
 *     the one current context shared by a VM's guest threads */
#ifndef KVMGPU_ABI_VGPU_ABI_H
#define KVMGPU_ABI_VGPU_ABI_H

#include <stdint.h>

#define VGPU_MAGIC 0x55504756u /* "VGPU" */
#define VGPU_ABI_VERSION 8u

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

static inline uint64_t vgpu_ring_bytes(uint32_t entries)
{
    return 128u + (uint64_t)entries * (64u + 32u + VGPU_PAYLOAD_BYTES);
}
/* The launch dimensions every CUDA GPU since compute capability 3.0 accepts
 * (zero aside, which callers check): block x, y <= 1024, z <= 64,
 * x*y*z <= 1024; grid x < 2^31, y, z <= 65535. Each dimension is checked
 * before the product, so no value can wrap it. The VMM and every backend
 * enforce it; the guest library checks it too, to refuse at the call. */
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

/* LAUNCH_KERNEL_PACKED: a command's arg[] as typed fields. The same bytes
 * as the packing the opcode documents (x86 is little-endian: gridX|gridY<<32
 * in arg2 is grid[0], grid[1]), so either form may write them. */
struct vgpu_launch_args {
    uint64_t function;
    uint64_t stream;
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_bytes;
    uint32_t params; /* the parameter buffer's bytes */
};

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

/* ---- opcodes: arguments in arg[], results in completion.result[] ------
 * dptr = device address (a CUdeviceptr of this VM);
 * handles (context, module, function, stream, event) are VM-local numbers
 * issued by the device, never host pointers; stream 0 is the default stream.
 *
 * Contexts: a VM has one current context, as one thread has in the driver
 * (a guest with threads keeps a stack per thread and sends its own before
 * a thread's call when another thread's is current). A VM starts with device 0's primary context current (not
 * retained), so a guest that never names a context works in it;
 * CTX_SET_CURRENT 0 leaves none current, and then every command that needs
 * a context (memory, modules, launches, streams, events, synchronize)
 * fails with VGPU_ERROR_INVALID_CONTEXT. Modules, functions, streams and
 * events belong to the context they were made in and are refused
 * (VGPU_ERROR_INVALID_HANDLE) while another is current; device memory is
 * the VM's in every context (unified addressing) but is freed with the
 * context it was allocated in. */
enum vgpu_opcode {
    VGPU_OP_NOP = 0,
    VGPU_OP_INIT = 1,                 /* -> result0 = backend id */
    VGPU_OP_DEVICE_GET_COUNT = 2,     /* -> result0 = count */
    VGPU_OP_DEVICE_GET_ATTRIBUTE = 3, /* arg0 attrib (CUdevice_attribute), arg1 ordinal -> result0 */
    VGPU_OP_DEVICE_GET_NAME = 4,      /* arg0 ordinal -> name in payload (NUL-terminated) */
    VGPU_OP_DEVICE_TOTAL_MEM = 5,     /* arg0 ordinal -> result0 bytes */
    VGPU_OP_CTX_SYNCHRONIZE = 6,
    VGPU_OP_MEM_ALLOC = 10,           /* arg0 bytes -> result0 dptr */
    VGPU_OP_MEM_FREE = 11,            /* arg0 dptr */
    VGPU_OP_MEM_GET_INFO = 12,        /* -> result0 free, result1 total (within quota) */
    VGPU_OP_MEMCPY_HTOD = 13,         /* arg0 dst dptr, arg1 src gpa, arg2 bytes, arg3 stream */
    VGPU_OP_MEMCPY_DTOH = 14,         /* arg0 dst gpa, arg1 src dptr, arg2 bytes, arg3 stream */
    VGPU_OP_MEMCPY_DTOD = 15,         /* arg0 dst dptr, arg1 src dptr, arg2 bytes, arg3 stream */
    VGPU_OP_MEMCPY_HTOD_SG = 16,      /* arg0 dst dptr, arg1 sg gpa, arg2 sg count, arg3 stream, arg4 strategy,
                                         arg5 total bytes (see vgpu_sg_strategy) */
    VGPU_OP_MEMCPY_DTOH_SG = 17,      /* arg0 src dptr, arg1 sg gpa, arg2 sg count, arg3 stream, arg4 strategy,
                                         arg5 total bytes */
    VGPU_OP_MEMSET_D8 = 18,           /* arg0 dptr, arg1 value, arg2 count, arg3 stream */
    VGPU_OP_MEMSET_D32 = 19,          /* arg0 dptr, arg1 value, arg2 count (u32s), arg3 stream */
    VGPU_OP_GUEST_RAM_DEVICE_PTR = 20,/* arg0 gpa, arg1 bytes -> result0 device address (zero-copy) */
    VGPU_OP_MEMSET_D16 = 21,          /* arg0 dptr (2-byte aligned), arg1 value, arg2 count (u16s), arg3 stream */
    VGPU_OP_HOST_REGISTER = 22,       /* arg0 sg list gpa, arg1 sg count, arg2 total bytes, arg3 flags
                                         (CU_MEMHOSTREGISTER_*) -> result0 registration, result1 its device
                                         address, or 0 where guest RAM is on huge host pages (no 4 KiB alias:
                                         copies go as any pageable buffer's) */
    VGPU_OP_HOST_UNREGISTER = 23,     /* arg0 registration */
    VGPU_OP_MODULE_LOAD_DATA = 30,    /* arg0 image gpa, arg1 image bytes -> result0 module */
    VGPU_OP_MODULE_UNLOAD = 31,       /* arg0 module */
    VGPU_OP_MODULE_GET_FUNCTION = 32, /* arg0 module; payload = name (payload_len bytes, no NUL) -> result0 function */
    /* 33: retired (a launch with per-parameter descriptors, which no guest library sent) */
    VGPU_OP_FUNC_GET_PARAM_INFO = 34, /* arg0 function, arg1 first parameter -> result0 parameter count,
                                         result1 parameter buffer bytes; payload <- vgpu_param_desc of
                                         parameters first, first+1, ... (as many as the payload holds):
                                         the layout the module gives the kernel */
    VGPU_OP_LAUNCH_KERNEL_PACKED = 35, /* arg0 function, arg1 stream, arg2 gridX|gridY<<32,
                                         arg3 gridZ|blockX<<32, arg4 blockY|blockZ<<32,
                                         arg5 sharedMem|bytes<<32 (vgpu_launch_args): the
                                         parameter buffer laid out by the kernel's layout (cuLaunchKernel's
                                         `extra` buffer), bytes exactly the layout's; payload = the buffer
                                         when bytes <= VGPU_PAYLOAD_BYTES, else its guest-physical
                                         address (uint64), in guest RAM */
    VGPU_OP_FUNC_GET_ATTRIBUTE = 36,  /* arg0 function, arg1 CUfunction_attribute -> result0 value (int) */
    VGPU_OP_FUNC_SET_ATTRIBUTE = 37,  /* arg0 function, arg1 CUfunction_attribute, arg2 value (int) */
    VGPU_OP_MODULE_GET_GLOBAL = 38,   /* arg0 module; payload = name (payload_len bytes, no NUL) -> result0 dptr,
                                         result1 bytes: a __device__ variable, usable as device memory */
    VGPU_OP_STREAM_CREATE = 40,       /* arg0 flags -> result0 stream */
    VGPU_OP_STREAM_SYNCHRONIZE = 41,  /* arg0 stream */
    VGPU_OP_STREAM_DESTROY = 42,      /* arg0 stream */
    VGPU_OP_STREAM_QUERY = 43,        /* arg0 stream -> SUCCESS when all its work is done, else NOT_READY */
    VGPU_OP_STREAM_WAIT_EVENT = 44,   /* arg0 stream, arg1 event, arg2 flags (0): later work on the stream
                                         waits for the event's recorded work */
    VGPU_OP_EVENT_CREATE = 50,        /* arg0 flags -> result0 event */
    VGPU_OP_EVENT_RECORD = 51,        /* arg0 event, arg1 stream */
    VGPU_OP_EVENT_SYNCHRONIZE = 52,   /* arg0 event */
    VGPU_OP_EVENT_ELAPSED_TIME = 53,  /* arg0 start, arg1 end -> result0 = float ms bits */
    VGPU_OP_EVENT_DESTROY = 54,       /* arg0 event */
    VGPU_OP_EVENT_QUERY = 55,         /* arg0 event -> SUCCESS when its recorded work is done, else NOT_READY */
    /* Contexts (see "contexts" above the opcodes). */
    VGPU_OP_CTX_CREATE = 60,          /* arg0 flags, arg1 device -> result0 context, now current */
    VGPU_OP_CTX_DESTROY = 61,         /* arg0 context (not a primary one); frees what was made in it */
    VGPU_OP_CTX_SET_CURRENT = 62,     /* arg0 context, or 0 for none */
    VGPU_OP_PRIMARY_CTX_RETAIN = 63,  /* arg0 device -> result0 its primary context, result1 retain count */
    VGPU_OP_PRIMARY_CTX_RELEASE = 64, /* arg0 device -> result0 retains left; the last release frees what
                                         was made in it */
    VGPU_OP_PRIMARY_CTX_STATE = 65,   /* arg0 device -> result0 flags, result1 1 if retained */
    VGPU_OP_PRIMARY_CTX_SET_FLAGS = 66, /* arg0 device, arg1 flags */
    VGPU_OP_PRIMARY_CTX_RESET = 67,   /* arg0 device: frees what was made in it, flags back to 0 */
    VGPU_OP_MEMCPY_PEER = 68,         /* arg0 dst dptr, arg1 dst context, arg2 src dptr, arg3 src context,
                                         arg4 bytes, arg5 stream */
    VGPU_OP_DEVICE_CAN_ACCESS_PEER = 69, /* arg0 device, arg1 peer device -> result0 1 if it can */
    VGPU_OP_CTX_ENABLE_PEER_ACCESS = 70, /* arg0 peer context, arg1 flags (0): from the current context */
    VGPU_OP_CTX_DISABLE_PEER_ACCESS = 71, /* arg0 peer context */
    /* Occupancy, limits and device pairs (ABI 4). */
    VGPU_OP_FUNC_OCCUPANCY = 72,      /* arg0 function, arg1 block size (threads), arg2 dynamic shared bytes,
                                         arg3 flags (CU_OCCUPANCY_*) -> result0 blocks of that size one
                                         multiprocessor holds at once (cuOccupancyMaxActiveBlocksPer-
                                         MultiprocessorWithFlags) */
    VGPU_OP_CTX_LIMIT = 73,           /* arg0 CUlimit, arg1 value, arg2 1 to set (else get) -> result0 the
                                         value in force: the current context's device (see VGPU_LIMIT_*) */
    VGPU_OP_DEVICE_P2P_ATTRIBUTE = 74, /* arg0 CUdevice_P2PAttribute, arg1 device, arg2 peer device
                                         -> result0 value (cuDeviceGetP2PAttribute) */
    /* Virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap...), on the current context's
       device; sizes, addresses and offsets in whole granules (VMM_GRANULARITY). The managed memory the
       guest library emulates is made of these (docs/managed-memory.md). */
    VGPU_OP_VMM_GRANULARITY = 75,     /* -> result0 the granule in bytes (minimum = recommended) */
    VGPU_OP_VMM_RESERVE = 76,         /* arg0 bytes, arg1 alignment (0 or a power of two), arg2 address asked
                                         for (0: any; a hint, as the driver's) -> result0 address */
    VGPU_OP_VMM_FREE_RESERVATION = 77, /* arg0 address, arg1 bytes: exactly one reservation, nothing mapped */
    VGPU_OP_VMM_CREATE = 78,          /* arg0 bytes -> result0 handle of physical memory (quota-counted) */
    VGPU_OP_VMM_RELEASE = 79,         /* arg0 handle: its memory goes when its last mapping does */
    VGPU_OP_VMM_MAP = 80,             /* arg0 address, arg1 bytes, arg2 offset (0), arg3 handle: inside one
                                         reservation, over nothing mapped, bytes <= the handle's size */
    VGPU_OP_VMM_UNMAP = 81,           /* arg0 address, arg1 bytes: whole mappings, nothing unmapped between */
    VGPU_OP_VMM_SET_ACCESS = 82,      /* arg0 address, arg1 bytes (whole mappings), arg2 device, arg3
                                         VGPU_VMM_ACCESS_*: the range is the VM's device memory unless NONE */
    /* CUDA graphs and stream capture (ABI 7; see "graphs" below). */
    VGPU_OP_STREAM_BEGIN_CAPTURE = 100, /* arg0 stream (not the default), arg1 CUstreamCaptureMode (0..2) */
    VGPU_OP_STREAM_END_CAPTURE = 101, /* arg0 stream (where the capture began) -> result0 graph */
    VGPU_OP_STREAM_CAPTURE_INFO = 102, /* arg0 stream -> result0 CUstreamCaptureStatus, result1 capture id */
    VGPU_OP_GRAPH_CREATE = 103,       /* arg0 flags (0) -> result0 graph */
    VGPU_OP_GRAPH_DESTROY = 104,      /* arg0 graph: its nodes' handles go with it */
    VGPU_OP_GRAPH_ADD_EMPTY_NODE = 105, /* arg0 graph -> result0 node */
    VGPU_OP_GRAPH_ADD_KERNEL_NODE = 106, /* vgpu_launch_args with `stream` = the graph, params = the buffer's
                                         bytes; payload = vgpu_graph_kernel_payload -> result0 node */
    VGPU_OP_GRAPH_ADD_MEMCPY_NODE = 107, /* arg0 graph, arg1 VGPU_OP_MEMCPY_HTOD/DTOH/DTOD (the direction),
                                         arg2 dst (dptr or gpa), arg3 src (dptr or gpa), arg4 bytes -> result0 node */
    VGPU_OP_GRAPH_ADD_MEMSET_NODE = 108, /* arg0 graph, arg1 dptr, arg2 value, arg3 element bytes (1, 2, 4),
                                         arg4 count (elements) -> result0 node */
    VGPU_OP_GRAPH_DEPENDENCIES = 109, /* arg0 graph, arg1 pairs (1..VGPU_GRAPH_EDGES_PER_CALL), arg2 1 to remove
                                         (else add); payload = pairs x {from node, to node} (uint64 each) */
    VGPU_OP_GRAPH_GET_NODES = 110,    /* arg0 graph, arg1 first -> result0 node count; payload <- node handles
                                         first, first+1, ... (as many as the payload holds, uint64 each) */
    VGPU_OP_GRAPH_DESTROY_NODE = 111, /* arg0 node */
    VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS = 112, /* as ADD_KERNEL_NODE with `stream` = the node */
    VGPU_OP_GRAPH_INSTANTIATE = 113,  /* arg0 graph, arg1 flags (0) -> result0 graph exec */
    VGPU_OP_GRAPH_EXEC_DESTROY = 114, /* arg0 graph exec */
    VGPU_OP_GRAPH_LAUNCH = 115,       /* arg0 graph exec, arg1 stream */
    VGPU_OP_GRAPH_UPLOAD = 116,       /* arg0 graph exec, arg1 stream */
    VGPU_OP_GRAPH_EXEC_UPDATE = 117,  /* arg0 graph exec, arg1 graph -> result0 CUgraphExecUpdateResult */
    VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS = 118, /* as KERNEL_NODE_SET_PARAMS; the payload's `exec` names
                                         the graph exec */
    /* Arrays, textures and surfaces (ABI 6; vgpu_array_abi.h has the payloads). An array
       is a handle of the current context; a texture or surface object is the driver's own
       value (a kernel reads it as a parameter), known to the VMM per device. */
    VGPU_OP_ARRAY_CREATE = 130,       /* payload vgpu_array_desc -> result0 array */
    VGPU_OP_ARRAY_DESTROY = 131,      /* arg0 array */
    VGPU_OP_ARRAY_GET_DESCRIPTOR = 132, /* arg0 array -> payload vgpu_array_desc */
    VGPU_OP_MEMCPY_3D = 133,          /* arg0 stream; payload vgpu_copy3d */
    VGPU_OP_TEX_OBJECT_CREATE = 134,  /* payload vgpu_tex_object -> result0 CUtexObject */
    VGPU_OP_TEX_OBJECT_DESTROY = 135, /* arg0 CUtexObject */
    VGPU_OP_SURF_OBJECT_CREATE = 136, /* payload vgpu_tex_resource (an array) -> result0 CUsurfObject */
    VGPU_OP_SURF_OBJECT_DESTROY = 137, /* arg0 CUsurfObject */
    VGPU_OP_SAMPLED_OBJECT_RESOURCE = 138, /* arg0 object, arg1 1 for a surface (else a texture)
                                         -> payload vgpu_tex_resource as created */
    /* CUDA libraries forwarded as calls (ABI 7): cuBLAS 200..299, cuRAND
       300..319, cuFFT 320..349; 100..159 are kept for other Driver API
       calls. A handle is a VM handle of the current context, freed with it.
       The compute calls' arguments are a typed struct in the payload
       (vgpu_blas_abi.h); every pointer, dimension and count is checked by
       the VMM before the library sees it. */
    VGPU_OP_BLAS_CREATE = 200,        /* -> result0 handle (cublasCreate); the library's default workspace
                                         counts against the VM's quota */
    VGPU_OP_BLAS_DESTROY = 201,       /* arg0 handle */
    VGPU_OP_BLAS_SET_STREAM = 202,    /* arg0 handle, arg1 stream */
    VGPU_OP_BLAS_SET_MATH_MODE = 203, /* arg0 handle, arg1 cublasMath_t */
    VGPU_OP_BLAS_SET_WORKSPACE = 204, /* arg0 handle, arg1 dptr (0: the default), arg2 bytes */
    VGPU_OP_BLAS_GET_VERSION = 205,   /* -> result0 the host library's version (CUBLAS_VERSION form) */
    VGPU_OP_BLAS_LEVEL1 = 210,        /* payload vgpu_blas_level1 -> host-mode result in result0..1 */
    VGPU_OP_BLAS_LEVEL2 = 211,        /* payload vgpu_blas_level2 */
    VGPU_OP_BLAS_GEMM = 220,          /* payload vgpu_blas_gemm (one, strided batched, pointer arrays) */
    VGPU_OP_BLAS_LEVEL3 = 221,        /* payload vgpu_blas_level3 (trsm, syrk, geam) */
    /* cuRAND's host API: a generator is a VM handle of the current context. */
    VGPU_OP_RAND_CREATE = 300,        /* arg0 curandRngType_t (a pseudo-random one) -> result0 generator */
    VGPU_OP_RAND_DESTROY = 301,       /* arg0 generator */
    VGPU_OP_RAND_SET_STREAM = 302,    /* arg0 generator, arg1 stream */
    VGPU_OP_RAND_SET_SEED = 303,      /* arg0 generator, arg1 seed */
    VGPU_OP_RAND_GENERATE = 304,      /* arg0 generator, arg1 dptr, arg2 count, arg3 VGPU_RAND_*, arg4 mean and
                                         arg5 standard deviation (normal ones: double bits) */
    VGPU_OP_RAND_SET_OFFSET = 305,    /* arg0 generator, arg1 offset (results skipped; per dimension when quasi) */
    VGPU_OP_RAND_SET_ORDERING = 306,  /* arg0 generator, arg1 curandOrdering_t */
    VGPU_OP_RAND_SET_DIMENSIONS = 307, /* arg0 generator (quasi-random), arg1 dimensions 1..VGPU_RAND_MAX_DIMENSIONS */
    VGPU_OP_RAND_GET_TABLE = 308,     /* arg0 VGPU_RAND_TABLE_* (no generator), arg1 dptr, arg2 the table's exact bytes:
                                         the host library's Sobol direction vectors or scramble constants,
                                         copied into device memory of this VM */
    /* cuFFT's basic plans: a plan is a VM handle of the current context. */
    VGPU_OP_FFT_PLAN = 320,           /* arg0 rank (1..3), arg1 nx, arg2 ny, arg3 nz, arg4 cufftType, arg5 batch
                                         -> result0 plan, result1 its work area's bytes */
    VGPU_OP_FFT_DESTROY = 321,        /* arg0 plan */
    VGPU_OP_FFT_SET_STREAM = 322,     /* arg0 plan, arg1 stream */
    VGPU_OP_FFT_EXEC = 323,           /* arg0 plan, arg1 input dptr, arg2 output dptr, arg3 the exec's cufftType
                                         (the plan's), arg4 direction (C2C, Z2Z: -1 forward, +1 inverse) */
    VGPU_OP_FFT_PLAN_MANY = 324,      /* payload vgpu_fft_plan_many (cufftMakePlanMany64's arguments)
                                         -> result0 plan, result1 its work area's bytes */
    VGPU_OP_FFT_SET_WORK_AREA = 325,  /* arg0 plan, arg1 dptr: the plan's work area (its work bytes from there,
                                         inside one of the VM's allocations; checked again at each exec) */
    VGPU_OP_MAX_ = 350 /* the table is indexed by opcode: the unused numbers are NOT_SUPPORTED */
};

/* Graphs: a graph, a graph exec and a node are VM handles owned by the
 * context they were made in, as streams are; a node's handle goes with its
 * graph. Nodes are added without dependencies (GRAPH_DEPENDENCIES adds the
 * edges). Kernel nodes are checked as LAUNCH_KERNEL_PACKED is (the
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
 * Other limits: VGPU_ERROR_UNSUPPORTED_LIMIT. RESET gives every limit its
 * start value back. */
#define VGPU_LIMIT_STACK_SIZE 0x00u
#define VGPU_LIMIT_PRINTF_FIFO_SIZE 0x01u
#define VGPU_LIMIT_MALLOC_HEAP_SIZE 0x02u
#define VGPU_LIMIT_DEV_RUNTIME_SYNC_DEPTH 0x03u
#define VGPU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT 0x04u
#define VGPU_LIMIT_MAX_L2_FETCH_GRANULARITY 0x05u
#define VGPU_LIMIT_PERSISTING_L2_CACHE_SIZE 0x06u
#define VGPU_LIMIT_COUNT_ 0x07u

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
static_assert(sizeof(struct vgpu_graph_kernel_payload) == VGPU_PAYLOAD_BYTES, "kernel node payload fills a slot");
#endif

#endif
