/* The vGPU's opcodes, each declared once (included by vgpu_abi.h, which
 * has the ring, the handles and the contexts they refer to): its number, its
 * facts (VGPU_OPF_*), the typed layout of its arguments (the command's
 * arg[]) and of its results (the completion's result[]). The opcode enum,
 * the names in logs, the dispatch's checks, the guest's, the device fuzzer's
 * opcode list, the layout hash (VGPU_ABI_LAYOUT_HASH) and
 * docs/vgpu-opcodes.md (scripts/vgpu-ops-doc.py) are made from VGPU_OPS.
 * Freestanding-safe, C and C++.
 *
 * A layout is a struct whose fields are arg[0], arg[1], ... in order (any
 * arg[] past it is ignored), or `void` for none; results likewise over
 * result[0..1]. Payloads are named in the rows' comments (vgpu_array_abi.h,
 * vgpu_blas_abi.h, and the payload structs in vgpu_abi.h).
 * dptr = device address of this VM; gpa = guest-physical address; handles
 * (context, module, function, stream, event, ...) are VM-local numbers the
 * device issued; stream 0 is the default stream. */
#ifndef KVMGPU_ABI_VGPU_OPS_H
#define KVMGPU_ABI_VGPU_OPS_H

/* ---- the ABI's version ---------------------------------------------------
 * Bump VGPU_ABI_VERSION on any change to a layout or meaning here or in
 * vgpu_abi.h, once, at the merge into main that brings it: branches that
 * each bumped on their own have shared a number.
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
 *     the one current context shared by a VM's guest threads; then the
 *     opcodes as one table (vgpu_ops.h) and VGPU_ABI_LAYOUT_HASH, no byte
 *     changed
 *   9 FUNC_AVAILABLE_SHARED (83)
 *  10 MEMSET_2D_D8/D16/D32 (24-26), STREAM_WRITE_VALUE and
 *     STREAM_WAIT_VALUE (45, 46)
 *  11 VGPU_CMD_FLAG_CLUSTER (thread-block clusters on launches),
 *     FUNC_MAX_ACTIVE_CLUSTERS and FUNC_MAX_CLUSTER_SIZE (84, 85); names
 *     past the payload for MODULE_GET_FUNCTION and MODULE_GET_GLOBAL
 *  12 MODULE_FUNCTIONS (39)
 *  13 STREAM_SET/GET_ATTRIBUTE (400, 401), GRAPH_CLONE,
 *     GRAPH_NODE_FIND_IN_CLONE, GRAPH_EDGES, GRAPH_NODE_GET_TYPE (402-405),
 *     VGPU_OP_MAX_ 450 (issue 42)
 *  14 GRAPH_ADD_EVENT_NODE, GRAPH_EVENT_NODE_SET/GET_EVENT,
 *     GRAPH_NODE_SET/GET_ENABLED, GRAPH_EXEC_GET_FLAGS (406-411), layout
 *     hash 0xee9c89beda5f35c4 (issue 42)
 *  15 graph memory: MEM_ALLOC_CAPTURED, MEM_FREE_GRAPH_ALLOCATION,
 *     GRAPH_ADD_MEM_ALLOC_NODE, GRAPH_ADD_MEM_FREE_NODE, GRAPH_MEM_ATTRIBUTE
 *     (412-416); GRAPH_DESTROY, GRAPH_EXEC_DESTROY and STREAM_END_CAPTURE
 *     may give quota back; GRAPH_INSTANTIATE's AUTO_FREE_ON_LAUNCH reaches
 *     the driver; layout hash 0x13bbd106de23e31d (issue 42)
 *  16 VMM_CREATE takes a compression request and says what was granted
 *     (issue 42); layout hash 0x35f41148dc10d41d
 *  17 DEVICE_GET_ATTRIBUTES (417): a block of a device's attributes in one
 *     command (issue 46); layout hash 0xd73d54b8c6c763b7
 *  18 conditional nodes and the graph under capture: GRAPH_CONDITIONAL_CREATE,
 *     GRAPH_ADD_CONDITIONAL_NODE, STREAM_CAPTURE_GRAPH,
 *     STREAM_UPDATE_CAPTURE_DEPENDENCIES, STREAM_BEGIN_CAPTURE_TO_GRAPH
 *     (418-422, issue 42); layout hash 0x70e17fb2648cc833
 *  19 child graph nodes: GRAPH_ADD_CHILD_GRAPH_NODE, GRAPH_CHILD_GRAPH
 *     (423, 424, issue 42); layout hash 0xd53fb43c9d5dfa20
 *  20 GRAPH_NEXT_NODE_DEPENDENCIES (425): a node is made with its
 *     dependencies, in one driver call as the program made it;
 *     VMM_GRANULARITY names a device and needs no context (issue 42);
 *     layout hash 0x36433e35011af632
 *  21 MODULE_GET_FUNCTION answers with the kernel's parameter layout (its
 *     count and size, the first descriptors in the payload): a kernel's
 *     first launch waits on one round trip, not two (issue 46); layout
 *     hash 0x361cc22ec569f1da */
#define VGPU_ABI_VERSION 21u
/* kvmgpu::abi::vgpu_abi_layout_hash() (vgpu_abi_layout.h) at this version:
 * a unit test fails when the layout moves and this is not the value. A
 * change that moves it bumps VGPU_ABI_VERSION and records the new value. */
#define VGPU_ABI_LAYOUT_HASH 0x361cc22ec569f1daull

/* ---- what an opcode does (the table's third column) -------------------- */
/* Needs a current context (else VGPU_ERROR_INVALID_CONTEXT, vgpu_abi.h "contexts"). */
#define VGPU_OPF_CTX 0x01u
/* May be submitted without waiting (VGPU_CMD_FLAG_ASYNC): its work is queued
 * on a stream and its error comes at the next synchronize. */
#define VGPU_OPF_ASYNC 0x02u
/* May carry VGPU_CMD_FLAG_COOPERATIVE and VGPU_CMD_FLAG_CLUSTER (launches). */
#define VGPU_OPF_COOP 0x04u
/* Stream-ordered work a stream capture records: while a capture is open it
 * counts against the VM's graph-node bound (VgpuOptions::max_graph_nodes). */
#define VGPU_OPF_CAPTURED 0x08u
/* Adds graph nodes, counted against max_graph_nodes. */
#define VGPU_OPF_NODES 0x10u
/* May take from the VM's device-memory quota (else VGPU_ERROR_OUT_OF_MEMORY). */
#define VGPU_OPF_TAKES_QUOTA 0x20u
/* May give device-memory quota back. */
#define VGPU_OPF_GIVES_QUOTA 0x40u

/* ---- argument layouts (arg[]) ------------------------------------------ */
struct vgpu_args_handle { uint64_t handle; };          /* the object the opcode acts on */
struct vgpu_args_flags { uint64_t flags; };            /* a create's flags */
struct vgpu_args_bytes { uint64_t bytes; };
struct vgpu_args_dptr { uint64_t dptr; };
struct vgpu_args_device { uint64_t device; };          /* an ordinal */
struct vgpu_args_device_attribute { uint64_t attribute; uint64_t device; };
struct vgpu_args_peer_devices { uint64_t device; uint64_t peer; };
struct vgpu_args_p2p_attribute { uint64_t attribute; uint64_t device; uint64_t peer; };
struct vgpu_args_device_flags { uint64_t device; uint64_t flags; };
struct vgpu_args_ctx_create { uint64_t flags; uint64_t device; };
struct vgpu_args_peer_access { uint64_t peer_context; uint64_t flags; };
struct vgpu_args_memcpy { uint64_t dst; uint64_t src; uint64_t bytes; uint64_t stream; };
struct vgpu_args_memcpy_sg {
    uint64_t dptr;     /* the device side */
    uint64_t sg_gpa;   /* vgpu_sg_entry[count] in guest RAM */
    uint64_t count;
    uint64_t stream;
    uint64_t strategy; /* vgpu_sg_strategy */
    uint64_t total;    /* the entries' bytes, or 0: not given */
};
struct vgpu_args_memcpy_peer {
    uint64_t dst; uint64_t dst_context; uint64_t src; uint64_t src_context; uint64_t bytes; uint64_t stream;
};
struct vgpu_args_memset { uint64_t dptr; uint64_t value; uint64_t count; uint64_t stream; };
struct vgpu_args_memset_2d { uint64_t dptr; uint64_t pitch; uint64_t value; uint64_t width; uint64_t height; uint64_t stream; };
struct vgpu_args_stream_value { uint64_t stream; uint64_t dptr; uint64_t value; uint64_t flags; uint64_t bytes; };
struct vgpu_args_guest_range { uint64_t gpa; uint64_t bytes; };
struct vgpu_args_host_register { uint64_t sg_gpa; uint64_t count; uint64_t total; uint64_t flags; };
struct vgpu_args_param_info { uint64_t function; uint64_t first; };
struct vgpu_args_module_functions { uint64_t module; uint64_t first; };
struct vgpu_args_attribute { uint64_t handle; uint64_t attribute; };
struct vgpu_args_set_attribute { uint64_t handle; uint64_t attribute; uint64_t value; };
struct vgpu_args_on_stream { uint64_t handle; uint64_t stream; }; /* an event record, a graph launch, a library's stream */
struct vgpu_args_wait_event { uint64_t stream; uint64_t event; uint64_t flags; };
struct vgpu_args_two_handles { uint64_t first; uint64_t second; };
/* A look-up by name in a module: name_bytes 0 when the payload holds the
 * name, else its length (C++ template names run to kilobytes). */
struct vgpu_args_name_lookup { uint64_t module; uint64_t name_bytes; };
struct vgpu_args_occupancy { uint64_t function; uint64_t block_threads; uint64_t shared_bytes; uint64_t flags; };
/* A launch's shape with its cluster (cluster[] all 0: the kernel's own
 * compiled-in cluster size, or none), as cuOccupancyMaxActiveClusters and
 * cuOccupancyMaxPotentialClusterSize take it in a CUlaunchConfig. */
struct vgpu_args_cluster_occupancy {
    uint64_t function;
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_bytes;
    uint32_t cluster[3];
};
struct vgpu_args_available_shared { uint64_t function; uint64_t blocks; uint64_t block_threads; }; /* ints' bits */
struct vgpu_args_ctx_limit { uint64_t limit; uint64_t value; uint64_t set; };
/* compression: 1 asks for compressible memory (CU_MEM_ALLOCATION_COMP_GENERIC), 0 not. */
struct vgpu_args_vmm_create { uint64_t bytes; uint64_t compression; };
/* DEVICE_GET_ATTRIBUTES: attributes first .. first + VGPU_ATTRIBUTES_PER_CALL - 1. */
struct vgpu_args_device_attributes { uint64_t device; uint64_t first; };
#define VGPU_ATTRIBUTES_PER_CALL 112u /* int32 values: the payload's 448 bytes */
struct vgpu_args_vmm_reserve { uint64_t bytes; uint64_t alignment; uint64_t address; };
struct vgpu_args_va_range { uint64_t address; uint64_t bytes; };
struct vgpu_args_vmm_map { uint64_t address; uint64_t bytes; uint64_t offset; uint64_t physical; };
struct vgpu_args_vmm_access { uint64_t address; uint64_t bytes; uint64_t device; uint64_t access; };
struct vgpu_args_begin_capture { uint64_t stream; uint64_t mode; };
struct vgpu_args_memcpy_node { uint64_t graph; uint64_t direction; uint64_t dst; uint64_t src; uint64_t bytes; };
struct vgpu_args_memset_node { uint64_t graph; uint64_t dptr; uint64_t value; uint64_t element_bytes; uint64_t count; };
struct vgpu_args_dependencies { uint64_t graph; uint64_t pairs; uint64_t remove; };
struct vgpu_args_get_nodes { uint64_t graph; uint64_t first; };
struct vgpu_args_next_node_dependencies { uint64_t graph; uint64_t count; uint64_t append; };
struct vgpu_args_stream { uint64_t stream; };
struct vgpu_args_sampled_resource { uint64_t object; uint64_t surface; };
struct vgpu_args_handle_value { uint64_t handle; uint64_t value; }; /* a library handle's setting */
struct vgpu_args_blas_workspace { uint64_t handle; uint64_t dptr; uint64_t bytes; };
struct vgpu_args_rand_generate {
    uint64_t generator; uint64_t dptr; uint64_t count; uint64_t kind; /* VGPU_RAND_* */
    uint64_t mean_bits; uint64_t stddev_bits; /* doubles' bits (normal kinds) */
};
struct vgpu_args_rand_create { uint64_t type; }; /* curandRngType_t */
struct vgpu_args_plan_work_area { uint64_t plan; uint64_t dptr; };
struct vgpu_args_rand_table { uint64_t table; uint64_t dptr; uint64_t bytes; };
struct vgpu_args_fft_plan { uint64_t rank; uint64_t nx; uint64_t ny; uint64_t nz; uint64_t type; uint64_t batch; };
struct vgpu_args_fft_exec { uint64_t plan; uint64_t input; uint64_t output; uint64_t type; uint64_t direction; };
/* A stream attribute's value (CUlaunchAttributeValue's members that streams
 * take): the access policy window (base dptr, bytes, hitRatio as a float's
 * bits, CUaccessProperty hit and miss), else `value`: a
 * CUsynchronizationPolicy, a CUlaunchMemSyncDomain, or a
 * CUlaunchMemSyncDomainMap as default_ | remote << 8. Fields the attribute
 * does not use are 0. */
struct vgpu_stream_attr_value {
    uint64_t base; uint64_t bytes; uint32_t hit_ratio_bits; uint32_t hit_prop; uint32_t miss_prop; uint32_t value;
};
struct vgpu_args_stream_attribute { uint64_t stream; uint64_t attribute; struct vgpu_stream_attr_value v; };
/* GRAPH_EDGES' question (kind, VGPU_GRAPH_EDGES_*) about a graph or a node. */
struct vgpu_args_graph_edges { uint64_t handle; uint64_t first; uint64_t kind; };
/* An event node: wait 1 waits for the event, 0 records it. exec 0 names the
 * graph's node, else only the exec's copy of it. */
struct vgpu_args_event_node { uint64_t graph; uint64_t event; uint64_t wait; };
struct vgpu_args_node_event { uint64_t exec; uint64_t node; uint64_t event; uint64_t wait; };
struct vgpu_args_node_enabled { uint64_t exec; uint64_t node; uint64_t enabled; };
/* Graph memory (cuMemAllocAsync/cuMemFreeAsync in a capture, memory nodes). */
struct vgpu_args_stream_bytes { uint64_t stream; uint64_t bytes; };
struct vgpu_args_stream_dptr { uint64_t stream; uint64_t dptr; };
struct vgpu_args_graph_bytes { uint64_t graph; uint64_t bytes; };
struct vgpu_args_graph_dptr { uint64_t graph; uint64_t dptr; };
/* CUgraphMem_attribute of a device; set 1 writes value (0: the high marks' reset). */
struct vgpu_args_graph_mem_attribute { uint64_t device; uint64_t attribute; uint64_t set; uint64_t value; };

/* Conditional nodes (CUgraphConditionalNodeType IF 0, WHILE 1, SWITCH 2;
 * size: the body graphs, VGPU_CONDITIONAL_BODIES at most). */
struct vgpu_args_conditional_create { uint64_t graph; uint64_t default_value; uint64_t flags; };
struct vgpu_args_conditional_node { uint64_t graph; uint64_t conditional; uint64_t type; uint64_t size; };
#define VGPU_CONDITIONAL_BODIES 56u /* uint64 handles: the payload's 448 bytes */
/* The graph a stream captures into and its capture's dependencies from `first`. */
struct vgpu_args_capture_graph { uint64_t stream; uint64_t first; };
/* count node handles in the payload (VGPU_CAPTURE_DEPENDENCIES at most);
 * flags: CUstreamUpdateCaptureDependencies_flags (0 add, 1 set). */
struct vgpu_args_capture_dependencies { uint64_t stream; uint64_t count; uint64_t flags; };
struct vgpu_args_capture_to_graph { uint64_t stream; uint64_t graph; uint64_t mode; uint64_t count; };
#define VGPU_CAPTURE_DEPENDENCIES 56u

/* ---- result layouts (result[]) ----------------------------------------- */
struct vgpu_result_value { uint64_t value; };
struct vgpu_result_handle { uint64_t handle; };
struct vgpu_result_dptr { uint64_t dptr; };
struct vgpu_result_global { uint64_t dptr; uint64_t bytes; };
struct vgpu_result_mem_info { uint64_t free_bytes; uint64_t total_bytes; };
struct vgpu_result_registration { uint64_t registration; uint64_t dptr; };
struct vgpu_result_param_info { uint64_t count; uint64_t bytes; };
/* A function's handle and its parameter layout: count in bits 0-31, the
 * buffer's bytes in bits 32-63 (FUNC_GET_PARAM_INFO's two results). */
struct vgpu_result_function { uint64_t handle; uint64_t params; };
struct vgpu_result_module_functions { uint64_t count; uint64_t returned; };
struct vgpu_result_primary_retain { uint64_t context; uint64_t retains; };
struct vgpu_result_primary_state { uint64_t flags; uint64_t active; };
struct vgpu_result_capture_info { uint64_t status; uint64_t id; };
struct vgpu_result_capture_graph { uint64_t graph; uint64_t dependencies; }; /* dependencies: all of them */
struct vgpu_result_child_graph_node { uint64_t node; uint64_t graph; };
struct vgpu_result_alloc_node { uint64_t node; uint64_t dptr; };
struct vgpu_result_vmm_create { uint64_t handle; uint64_t compression; }; /* compression: what the driver granted */
/* Bit i (of low, then high) set: attribute first + i is in the payload; clear: ask for it alone. */
struct vgpu_result_attribute_mask { uint64_t low; uint64_t high; };
struct vgpu_result_fft_plan { uint64_t plan; uint64_t work_bytes; };
struct vgpu_result_bytes16 { uint8_t bytes[16]; }; /* a host-mode BLAS result */

/* ---- the table: X(NAME, number, VGPU_OPF_*, arguments, results) --------
 * Numbers: 0-99 the Driver API's core, 100-159 more Driver API calls, cuBLAS
 * 200-299, cuRAND 300-319, cuFFT 320-349, then more Driver API calls from
 * 400 (issue 42: stream attributes, graph topology); 33 is retired (a descriptor-form
 * launch no guest library sent). Rows in number order. */
#define VGPU_OPS(X) \
    X(NOP, 0, 0, void, void) \
    X(INIT, 1, 0, void, struct vgpu_result_value) /* the backend (VGPU_BACKEND_*) */ \
    X(DEVICE_GET_COUNT, 2, 0, void, struct vgpu_result_value) \
    X(DEVICE_GET_ATTRIBUTE, 3, 0, struct vgpu_args_device_attribute, struct vgpu_result_value) /* CUdevice_attribute */ \
    X(DEVICE_GET_NAME, 4, 0, struct vgpu_args_device, void) /* -> payload: the name, NUL-terminated */ \
    X(DEVICE_TOTAL_MEM, 5, 0, struct vgpu_args_device, struct vgpu_result_value) /* bytes */ \
    X(CTX_SYNCHRONIZE, 6, VGPU_OPF_CTX, void, void) \
    X(MEM_ALLOC, 10, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA, struct vgpu_args_bytes, struct vgpu_result_dptr) \
    X(MEM_FREE, 11, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_dptr, void) \
    X(MEM_GET_INFO, 12, VGPU_OPF_CTX, void, struct vgpu_result_mem_info) /* within the quota */ \
    X(MEMCPY_HTOD, 13, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memcpy, void) \
        /* dst dptr, src gpa */ \
    X(MEMCPY_DTOH, 14, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memcpy, void) \
        /* dst gpa, src dptr */ \
    X(MEMCPY_DTOD, 15, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memcpy, void) \
    X(MEMCPY_HTOD_SG, 16, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memcpy_sg, void) \
        /* see vgpu_sg_strategy */ \
    X(MEMCPY_DTOH_SG, 17, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memcpy_sg, void) \
    X(MEMSET_D8, 18, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memset, void) \
    X(MEMSET_D32, 19, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memset, void) \
        /* count in u32s */ \
    X(GUEST_RAM_DEVICE_PTR, 20, VGPU_OPF_CTX, struct vgpu_args_guest_range, struct vgpu_result_dptr) /* zero-copy */ \
    X(MEMSET_D16, 21, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memset, void) \
        /* dptr 2-byte aligned, count in u16s */ \
    X(HOST_REGISTER, 22, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA, struct vgpu_args_host_register, \
      struct vgpu_result_registration) \
        /* flags CU_MEMHOSTREGISTER_*; dptr 0 where guest RAM is on huge host pages (no 4 KiB alias: \
           copies go as any pageable buffer's) */ \
    X(HOST_UNREGISTER, 23, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) \
    X(MEMSET_2D_D8, 24, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memset_2d, void) \
        /* height rows of width elements, row r at dptr + r * pitch (pitch >= width in bytes) */ \
    X(MEMSET_2D_D16, 25, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memset_2d, void) \
        /* dptr and pitch 2-byte aligned */ \
    X(MEMSET_2D_D32, 26, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_memset_2d, void) \
        /* dptr and pitch 4-byte aligned */ \
    X(MODULE_LOAD_DATA, 30, VGPU_OPF_CTX, struct vgpu_args_guest_range, struct vgpu_result_handle) /* the image */ \
    X(MODULE_UNLOAD, 31, VGPU_OPF_CTX, struct vgpu_args_handle, void) \
    X(MODULE_GET_FUNCTION, 32, VGPU_OPF_CTX, struct vgpu_args_name_lookup, struct vgpu_result_function) \
        /* the name, no NUL: name_bytes 0, the payload's payload_len bytes; past VGPU_PAYLOAD_BYTES \
           (up to VGPU_MAX_NAME_BYTES), at the gpa the payload holds; payload <- vgpu_param_desc of \
           parameters 0, 1, ... as FUNC_GET_PARAM_INFO's from 0 */ \
    X(FUNC_GET_PARAM_INFO, 34, VGPU_OPF_CTX, struct vgpu_args_param_info, struct vgpu_result_param_info) \
        /* payload <- vgpu_param_desc of parameters first, first+1, ... (as many as the payload holds): \
           the layout the module gives the kernel */ \
    X(LAUNCH_KERNEL_PACKED, 35, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_COOP | VGPU_OPF_CAPTURED, \
      struct vgpu_launch_args, void) \
        /* params = the parameter buffer's bytes, exactly the kernel layout's (cuLaunchKernel's `extra` \
           buffer); payload = the buffer when it fits VGPU_PAYLOAD_BYTES, else its gpa (uint64) */ \
    X(FUNC_GET_ATTRIBUTE, 36, VGPU_OPF_CTX, struct vgpu_args_attribute, struct vgpu_result_value) \
        /* CUfunction_attribute; an int */ \
    X(FUNC_SET_ATTRIBUTE, 37, VGPU_OPF_CTX, struct vgpu_args_set_attribute, void) \
    X(MODULE_GET_GLOBAL, 38, VGPU_OPF_CTX, struct vgpu_args_name_lookup, struct vgpu_result_global) \
        /* the name as MODULE_GET_FUNCTION's: a __device__ variable, usable as device memory */ \
    X(MODULE_FUNCTIONS, 39, VGPU_OPF_CTX, struct vgpu_args_module_functions, struct vgpu_result_module_functions) \
        /* payload <- function handles (uint64) of the module's kernels first, first+1, ... (as many as \
           the payload holds) -> the module's count, how many the payload got */ \
    X(STREAM_CREATE, 40, VGPU_OPF_CTX, struct vgpu_args_flags, struct vgpu_result_handle) \
    X(STREAM_SYNCHRONIZE, 41, VGPU_OPF_CTX, struct vgpu_args_handle, void) \
    X(STREAM_DESTROY, 42, VGPU_OPF_CTX, struct vgpu_args_handle, void) \
    X(STREAM_QUERY, 43, VGPU_OPF_CTX, struct vgpu_args_handle, void) /* SUCCESS when its work is done, else NOT_READY */ \
    X(STREAM_WAIT_EVENT, 44, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_wait_event, void) \
        /* flags 0: later work on the stream waits for the event's recorded work */ \
    X(STREAM_WRITE_VALUE, 45, VGPU_OPF_CTX | VGPU_OPF_ASYNC, struct vgpu_args_stream_value, void) \
        /* bytes 4 or 8, dptr aligned to it; flags CU_STREAM_WRITE_VALUE_* */ \
    X(STREAM_WAIT_VALUE, 46, VGPU_OPF_CTX | VGPU_OPF_ASYNC, struct vgpu_args_stream_value, void) \
        /* bytes 4 or 8, dptr aligned to it; flags CU_STREAM_WAIT_VALUE_* (GEQ, EQ, AND, NOR, FLUSH) */ \
    X(EVENT_CREATE, 50, VGPU_OPF_CTX, struct vgpu_args_flags, struct vgpu_result_handle) \
    X(EVENT_RECORD, 51, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_on_stream, void) \
    X(EVENT_SYNCHRONIZE, 52, VGPU_OPF_CTX, struct vgpu_args_handle, void) \
    X(EVENT_ELAPSED_TIME, 53, VGPU_OPF_CTX, struct vgpu_args_two_handles, struct vgpu_result_value) \
        /* start, end -> a float's bits (ms) */ \
    X(EVENT_DESTROY, 54, VGPU_OPF_CTX, struct vgpu_args_handle, void) \
    X(EVENT_QUERY, 55, VGPU_OPF_CTX, struct vgpu_args_handle, void) /* SUCCESS when done, else NOT_READY */ \
    X(CTX_CREATE, 60, 0, struct vgpu_args_ctx_create, struct vgpu_result_handle) /* now current */ \
    X(CTX_DESTROY, 61, VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) \
        /* not a primary one; frees what was made in it */ \
    X(CTX_SET_CURRENT, 62, 0, struct vgpu_args_handle, void) /* 0: none */ \
    X(PRIMARY_CTX_RETAIN, 63, 0, struct vgpu_args_device, struct vgpu_result_primary_retain) \
    X(PRIMARY_CTX_RELEASE, 64, VGPU_OPF_GIVES_QUOTA, struct vgpu_args_device, struct vgpu_result_value) \
        /* retains left; the last release frees what was made in it */ \
    X(PRIMARY_CTX_STATE, 65, 0, struct vgpu_args_device, struct vgpu_result_primary_state) \
    X(PRIMARY_CTX_SET_FLAGS, 66, 0, struct vgpu_args_device_flags, void) \
    X(PRIMARY_CTX_RESET, 67, VGPU_OPF_GIVES_QUOTA, struct vgpu_args_device, void) \
        /* frees what was made in it, flags back to 0 */ \
    X(MEMCPY_PEER, 68, VGPU_OPF_CTX | VGPU_OPF_ASYNC, struct vgpu_args_memcpy_peer, void) \
    X(DEVICE_CAN_ACCESS_PEER, 69, 0, struct vgpu_args_peer_devices, struct vgpu_result_value) /* 1 if it can */ \
    X(CTX_ENABLE_PEER_ACCESS, 70, VGPU_OPF_CTX, struct vgpu_args_peer_access, void) /* flags 0; from the current */ \
    X(CTX_DISABLE_PEER_ACCESS, 71, VGPU_OPF_CTX, struct vgpu_args_handle, void) /* the peer context */ \
    X(FUNC_OCCUPANCY, 72, VGPU_OPF_CTX, struct vgpu_args_occupancy, struct vgpu_result_value) \
        /* flags CU_OCCUPANCY_* -> blocks of that size one multiprocessor holds at once */ \
    X(CTX_LIMIT, 73, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_ctx_limit, \
      struct vgpu_result_value) \
        /* CUlimit, set 1 to set (else get) -> the value in force on the current context's device \
           (see VGPU_LIMIT_*) */ \
    X(DEVICE_P2P_ATTRIBUTE, 74, 0, struct vgpu_args_p2p_attribute, struct vgpu_result_value) \
        /* CUdevice_P2PAttribute */ \
    /* Virtual memory management on the current context's device; sizes, addresses and offsets in whole \
       granules (VMM_GRANULARITY). Managed memory is made of these (docs/managed-memory.md). */ \
    X(VMM_GRANULARITY, 75, 0, struct vgpu_args_device, struct vgpu_result_value) \
        /* of a device (no context needed); minimum = recommended */ \
    X(VMM_RESERVE, 76, VGPU_OPF_CTX, struct vgpu_args_vmm_reserve, struct vgpu_result_dptr) \
        /* alignment 0 or a power of two; address 0: any (a hint, as the driver's) */ \
    X(VMM_FREE_RESERVATION, 77, VGPU_OPF_CTX, struct vgpu_args_va_range, void) /* one reservation, nothing mapped */ \
    X(VMM_CREATE, 78, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA, struct vgpu_args_vmm_create, struct vgpu_result_vmm_create) \
        /* physical memory */ \
    X(VMM_RELEASE, 79, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) \
        /* its memory goes when its last mapping does */ \
    X(VMM_MAP, 80, VGPU_OPF_CTX, struct vgpu_args_vmm_map, void) \
        /* offset 0; inside one reservation, over nothing mapped, bytes <= the handle's size */ \
    X(VMM_UNMAP, 81, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_va_range, void) \
        /* whole mappings, nothing unmapped between */ \
    X(VMM_SET_ACCESS, 82, VGPU_OPF_CTX, struct vgpu_args_vmm_access, void) \
        /* whole mappings; VGPU_VMM_ACCESS_*: the range is the VM's device memory unless NONE */ \
    X(FUNC_AVAILABLE_SHARED, 83, VGPU_OPF_CTX, struct vgpu_args_available_shared, struct vgpu_result_value) \
        /* -> dynamic shared memory bytes a block may use with `blocks` such blocks per multiprocessor */ \
    X(FUNC_MAX_ACTIVE_CLUSTERS, 84, VGPU_OPF_CTX, struct vgpu_args_cluster_occupancy, struct vgpu_result_value) \
        /* -> clusters of that shape the device runs at once */ \
    X(FUNC_MAX_CLUSTER_SIZE, 85, VGPU_OPF_CTX, struct vgpu_args_cluster_occupancy, struct vgpu_result_value) \
        /* cluster[] ignored -> the largest cluster (in blocks) the kernel can launch with that shape */ \
    /* CUDA graphs and stream capture (see "graphs" in vgpu_abi.h). */ \
    X(STREAM_BEGIN_CAPTURE, 100, VGPU_OPF_CTX, struct vgpu_args_begin_capture, void) \
        /* not the default stream; CUstreamCaptureMode 0..2 */ \
    X(STREAM_END_CAPTURE, 101, VGPU_OPF_CTX | VGPU_OPF_NODES | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, \
      struct vgpu_result_handle) \
        /* the stream where the capture began -> the graph */ \
    X(STREAM_CAPTURE_INFO, 102, VGPU_OPF_CTX, struct vgpu_args_handle, struct vgpu_result_capture_info) \
        /* CUstreamCaptureStatus, capture id */ \
    X(GRAPH_CREATE, 103, VGPU_OPF_CTX, struct vgpu_args_flags, struct vgpu_result_handle) /* flags 0 */ \
    X(GRAPH_DESTROY, 104, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) /* its nodes' handles go with it */ \
    X(GRAPH_ADD_EMPTY_NODE, 105, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_handle, struct vgpu_result_handle) \
    X(GRAPH_ADD_KERNEL_NODE, 106, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_launch_args, struct vgpu_result_handle) \
        /* `stream` = the graph, params = the buffer's bytes; payload vgpu_graph_kernel_payload */ \
    X(GRAPH_ADD_MEMCPY_NODE, 107, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_memcpy_node, \
      struct vgpu_result_handle) \
        /* direction VGPU_OP_MEMCPY_HTOD/DTOH/DTOD; dst, src a dptr or gpa */ \
    X(GRAPH_ADD_MEMSET_NODE, 108, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_memset_node, \
      struct vgpu_result_handle) /* element bytes 1, 2, 4; count in elements */ \
    X(GRAPH_DEPENDENCIES, 109, VGPU_OPF_CTX, struct vgpu_args_dependencies, void) \
        /* pairs 1..VGPU_GRAPH_EDGES_PER_CALL, remove 1 (else add); payload = pairs x {from, to} (uint64) */ \
    X(GRAPH_GET_NODES, 110, VGPU_OPF_CTX, struct vgpu_args_get_nodes, struct vgpu_result_value) \
        /* -> the node count; payload <- node handles first, first+1, ... (uint64 each) */ \
    X(GRAPH_DESTROY_NODE, 111, VGPU_OPF_CTX, struct vgpu_args_handle, void) \
    X(GRAPH_KERNEL_NODE_SET_PARAMS, 112, VGPU_OPF_CTX, struct vgpu_launch_args, void) \
        /* as ADD_KERNEL_NODE with `stream` = the node */ \
    X(GRAPH_INSTANTIATE, 113, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_handle_value, \
      struct vgpu_result_handle) /* graph, flags 0 -> graph exec */ \
    X(GRAPH_EXEC_DESTROY, 114, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) \
    X(GRAPH_LAUNCH, 115, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_on_stream, void) \
    X(GRAPH_UPLOAD, 116, VGPU_OPF_CTX | VGPU_OPF_ASYNC, struct vgpu_args_on_stream, void) \
    X(GRAPH_EXEC_UPDATE, 117, VGPU_OPF_CTX, struct vgpu_args_two_handles, struct vgpu_result_value) \
        /* exec, graph -> CUgraphExecUpdateResult */ \
    X(GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, 118, VGPU_OPF_CTX, struct vgpu_launch_args, void) \
        /* as KERNEL_NODE_SET_PARAMS; the payload's `exec` names the graph exec */ \
    /* Arrays, textures and surfaces (vgpu_array_abi.h has the payloads). An array is a handle of the \
       current context; a texture or surface object is the driver's own value (a kernel reads it as a \
       parameter), known to the VMM per device. */ \
    X(ARRAY_CREATE, 130, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA, void, struct vgpu_result_handle) \
        /* payload vgpu_array_desc */ \
    X(ARRAY_DESTROY, 131, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) \
    X(ARRAY_GET_DESCRIPTOR, 132, VGPU_OPF_CTX, struct vgpu_args_handle, void) /* -> payload vgpu_array_desc */ \
    X(MEMCPY_3D, 133, VGPU_OPF_CTX | VGPU_OPF_ASYNC, struct vgpu_args_stream, void) /* payload vgpu_copy3d */ \
    X(TEX_OBJECT_CREATE, 134, VGPU_OPF_CTX, void, struct vgpu_result_handle) \
        /* payload vgpu_tex_object -> the CUtexObject */ \
    X(TEX_OBJECT_DESTROY, 135, VGPU_OPF_CTX, struct vgpu_args_handle, void) /* the CUtexObject */ \
    X(SURF_OBJECT_CREATE, 136, VGPU_OPF_CTX, void, struct vgpu_result_handle) \
        /* payload vgpu_tex_resource (an array) -> the CUsurfObject */ \
    X(SURF_OBJECT_DESTROY, 137, VGPU_OPF_CTX, struct vgpu_args_handle, void) \
    X(SAMPLED_OBJECT_RESOURCE, 138, VGPU_OPF_CTX, struct vgpu_args_sampled_resource, void) \
        /* surface 1 (else a texture) -> payload vgpu_tex_resource as created */ \
    /* cuBLAS: a handle is a VM handle of the current context, freed with it. The compute calls' \
       arguments are a typed struct in the payload (vgpu_blas_abi.h), every pointer, dimension and \
       count checked by the VMM before the library sees it. */ \
    X(BLAS_CREATE, 200, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA, void, struct vgpu_result_handle) \
        /* cublasCreate; the library's default workspace counts against the quota */ \
    X(BLAS_DESTROY, 201, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) \
    X(BLAS_SET_STREAM, 202, VGPU_OPF_CTX, struct vgpu_args_on_stream, void) \
    X(BLAS_SET_MATH_MODE, 203, VGPU_OPF_CTX, struct vgpu_args_handle_value, void) /* cublasMath_t */ \
    X(BLAS_SET_WORKSPACE, 204, VGPU_OPF_CTX, struct vgpu_args_blas_workspace, void) /* dptr 0: the default */ \
    X(BLAS_GET_VERSION, 205, VGPU_OPF_CTX, void, struct vgpu_result_value) /* CUBLAS_VERSION form */ \
    X(BLAS_LEVEL1, 210, VGPU_OPF_CTX | VGPU_OPF_ASYNC, void, struct vgpu_result_bytes16) \
        /* payload vgpu_blas_level1 -> a host-mode result */ \
    X(BLAS_LEVEL2, 211, VGPU_OPF_CTX | VGPU_OPF_ASYNC, void, void) /* payload vgpu_blas_level2 */ \
    X(BLAS_GEMM, 220, VGPU_OPF_CTX | VGPU_OPF_ASYNC, void, void) \
        /* payload vgpu_blas_gemm (one, strided batched, pointer arrays) */ \
    X(BLAS_LEVEL3, 221, VGPU_OPF_CTX | VGPU_OPF_ASYNC, void, void) /* payload vgpu_blas_level3 */ \
    /* cuRAND's host API: a generator is a VM handle of the current context. */ \
    X(RAND_CREATE, 300, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA, struct vgpu_args_rand_create, struct vgpu_result_handle) \
    X(RAND_DESTROY, 301, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) \
    X(RAND_SET_STREAM, 302, VGPU_OPF_CTX, struct vgpu_args_on_stream, void) \
    X(RAND_SET_SEED, 303, VGPU_OPF_CTX, struct vgpu_args_handle_value, void) \
    X(RAND_GENERATE, 304, VGPU_OPF_CTX | VGPU_OPF_ASYNC, struct vgpu_args_rand_generate, void) \
    X(RAND_SET_OFFSET, 305, VGPU_OPF_CTX, struct vgpu_args_handle_value, void) \
        /* results skipped; per dimension when quasi-random */ \
    X(RAND_SET_ORDERING, 306, VGPU_OPF_CTX, struct vgpu_args_handle_value, void) /* curandOrdering_t */ \
    X(RAND_SET_DIMENSIONS, 307, VGPU_OPF_CTX, struct vgpu_args_handle_value, void) \
        /* quasi-random; 1..VGPU_RAND_MAX_DIMENSIONS */ \
    X(RAND_GET_TABLE, 308, VGPU_OPF_CTX, struct vgpu_args_rand_table, void) \
        /* VGPU_RAND_TABLE_* (no generator), bytes = the table's exactly: the host library's Sobol \
           direction vectors or scramble constants, copied into device memory of this VM */ \
    /* cuFFT's plans: a plan is a VM handle of the current context. */ \
    X(FFT_PLAN, 320, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA, struct vgpu_args_fft_plan, struct vgpu_result_fft_plan) \
        /* rank 1..3, cufftType */ \
    X(FFT_DESTROY, 321, VGPU_OPF_CTX | VGPU_OPF_GIVES_QUOTA, struct vgpu_args_handle, void) \
    X(FFT_SET_STREAM, 322, VGPU_OPF_CTX, struct vgpu_args_on_stream, void) \
    X(FFT_EXEC, 323, VGPU_OPF_CTX | VGPU_OPF_ASYNC, struct vgpu_args_fft_exec, void) \
        /* type: the plan's cufftType; direction (C2C, Z2Z): -1 forward, +1 inverse */ \
    X(FFT_PLAN_MANY, 324, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA, void, struct vgpu_result_fft_plan) \
        /* payload vgpu_fft_plan_many (cufftMakePlanMany64's arguments) */ \
    X(FFT_SET_WORK_AREA, 325, VGPU_OPF_CTX, struct vgpu_args_plan_work_area, void) \
        /* the plan's work area: its work bytes from dptr, inside one of the VM's allocations (checked \
           again at each exec) */ \
    /* Stream attributes (cuStreamSetAttribute): VGPU_STREAM_ATTR_* (vgpu_abi.h). */ \
    X(STREAM_SET_ATTRIBUTE, 400, VGPU_OPF_CTX, struct vgpu_args_stream_attribute, void) \
        /* a window inside one of the VM's allocations on the context's device */ \
    X(STREAM_GET_ATTRIBUTE, 401, VGPU_OPF_CTX, struct vgpu_args_attribute, void) \
        /* stream, attribute -> payload vgpu_stream_attr_value */ \
    /* Graph shape and copies (see "graphs" in vgpu_abi.h). */ \
    X(GRAPH_CLONE, 402, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_handle, struct vgpu_result_handle) \
        /* graph -> a copy of it (its nodes counted again) */ \
    X(GRAPH_NODE_FIND_IN_CLONE, 403, VGPU_OPF_CTX, struct vgpu_args_two_handles, struct vgpu_result_handle) \
        /* clone, a node of the graph it was cloned from (then) -> the clone's copy */ \
    X(GRAPH_EDGES, 404, VGPU_OPF_CTX, struct vgpu_args_graph_edges, struct vgpu_result_value) \
        /* kind VGPU_GRAPH_EDGES_* -> how many pairs; payload <- {from, to} node handles (uint64 each) \
           from pair `first` on */ \
    X(GRAPH_NODE_GET_TYPE, 405, VGPU_OPF_CTX, struct vgpu_args_handle, struct vgpu_result_value) \
        /* -> CUgraphNodeType as the device's graph has it (a guest host node is an empty one there) */ \
    /* Event nodes, nodes switched off in an exec, an exec's flags (issue 42). */ \
    X(GRAPH_ADD_EVENT_NODE, 406, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_event_node, struct vgpu_result_handle) \
        /* an event of the graph's context */ \
    X(GRAPH_EVENT_NODE_SET_EVENT, 407, VGPU_OPF_CTX, struct vgpu_args_node_event, void) \
        /* `wait` must be the node's kind; exec: one instantiated from the node's graph */ \
    X(GRAPH_EVENT_NODE_GET_EVENT, 408, VGPU_OPF_CTX, struct vgpu_args_handle_value, struct vgpu_result_handle) \
        /* node, wait (the node's kind) -> the event's handle (INVALID_HANDLE once destroyed) */ \
    X(GRAPH_NODE_SET_ENABLED, 409, VGPU_OPF_CTX, struct vgpu_args_node_enabled, void) \
        /* kernel, memcpy and memset nodes, in an exec instantiated from the node's graph */ \
    X(GRAPH_NODE_GET_ENABLED, 410, VGPU_OPF_CTX, struct vgpu_args_two_handles, struct vgpu_result_value) \
        /* exec, node -> 1 enabled, 0 disabled */ \
    X(GRAPH_EXEC_GET_FLAGS, 411, VGPU_OPF_CTX, struct vgpu_args_handle, struct vgpu_result_value) \
        /* -> the flags GRAPH_INSTANTIATE accepted */ \
    /* Graph memory (issue 42): an allocation a graph makes. Its address is the VM's from the node's \
       creation until the last graph and exec holding the node are destroyed (counted against the quota \
       all that time); the driver backs it while a launch has it allocated. */ \
    X(MEM_ALLOC_CAPTURED, 412, VGPU_OPF_CTX | VGPU_OPF_TAKES_QUOTA | VGPU_OPF_CAPTURED, \
      struct vgpu_args_stream_bytes, struct vgpu_result_dptr) \
        /* cuMemAllocAsync on a capturing stream: the capture's allocation node */ \
    X(MEM_FREE_GRAPH_ALLOCATION, 413, VGPU_OPF_CTX | VGPU_OPF_ASYNC | VGPU_OPF_CAPTURED, struct vgpu_args_stream_dptr, \
      void) /* a graph allocation: a free node on a capturing stream, else cuMemFreeAsync (0: the default stream) */ \
    X(GRAPH_ADD_MEM_ALLOC_NODE, 414, VGPU_OPF_CTX | VGPU_OPF_NODES | VGPU_OPF_TAKES_QUOTA, \
      struct vgpu_args_graph_bytes, struct vgpu_result_alloc_node) /* on the context's device */ \
    X(GRAPH_ADD_MEM_FREE_NODE, 415, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_graph_dptr, \
      struct vgpu_result_handle) /* dptr: a graph allocation's start */ \
    X(GRAPH_MEM_ATTRIBUTE, 416, 0, struct vgpu_args_graph_mem_attribute, struct vgpu_result_value) \
        /* the VM's graph allocations on the device: bytes held now and the high mark since its reset */ \
    X(DEVICE_GET_ATTRIBUTES, 417, 0, struct vgpu_args_device_attributes, struct vgpu_result_attribute_mask) \
        /* payload <- int32 values of attributes first.. (issue 46: a runtime's device properties in one \
           command); each answered as DEVICE_GET_ATTRIBUTE answers it */ \
    /* Conditional nodes and the graph under capture (issue 42). A conditional node's body graphs are \
       the node's: the guest adds nodes to them, never destroys them; they go with the node. */ \
    X(GRAPH_CONDITIONAL_CREATE, 418, VGPU_OPF_CTX, struct vgpu_args_conditional_create, struct vgpu_result_value) \
        /* -> the conditional's handle, as kernels set it (cudaGraphSetConditional) */ \
    X(GRAPH_ADD_CONDITIONAL_NODE, 419, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_conditional_node, \
      struct vgpu_result_handle) /* payload <- the size body graphs' handles (uint64 each) */ \
    X(STREAM_CAPTURE_GRAPH, 420, VGPU_OPF_CTX, struct vgpu_args_capture_graph, struct vgpu_result_capture_graph) \
        /* an active capture: its graph; payload <- dependency node handles from first (uint64 each) */ \
    X(STREAM_UPDATE_CAPTURE_DEPENDENCIES, 421, VGPU_OPF_CTX, struct vgpu_args_capture_dependencies, void) \
    X(STREAM_BEGIN_CAPTURE_TO_GRAPH, 422, VGPU_OPF_CTX, struct vgpu_args_capture_to_graph, void) \
        /* payload: the capture's first dependencies, node handles of that graph */ \
    /* Child graph nodes: the node holds a copy of the child graph, a graph of the node's (as a \
       conditional node's bodies are). */ \
    X(GRAPH_ADD_CHILD_GRAPH_NODE, 423, VGPU_OPF_CTX | VGPU_OPF_NODES, struct vgpu_args_two_handles, \
      struct vgpu_result_child_graph_node) /* graph, child -> the node and its copy of the child */ \
    X(GRAPH_CHILD_GRAPH, 424, VGPU_OPF_CTX, struct vgpu_args_handle, struct vgpu_result_handle) \
        /* a child graph node -> its graph (a handle issued on first sight, e.g. for a captured graph launch) */ \
    X(GRAPH_NEXT_NODE_DEPENDENCIES, 425, VGPU_OPF_CTX, struct vgpu_args_next_node_dependencies, void) \
        /* the dependencies the next node added to `graph` is made with (one driver call, as the \
           program's): payload = count (0..VGPU_GRAPH_NODES_PER_CALL) node \
           handles, append 1 adds to those given before; they are for the very next command: an EMPTY, \
           KERNEL, MEMCPY, MEMSET, MEM_ALLOC, MEM_FREE or event node it adds to `graph` takes them, any \
           other command (another graph's node, one refused before its node is made) drops them */

#define VGPU_OP_ENUMERATOR_(name, number, flags, args, result) VGPU_OP_##name = number,
enum vgpu_opcode {
    VGPU_OPS(VGPU_OP_ENUMERATOR_)
    VGPU_OP_MAX_ = 450 /* the dispatch is indexed by opcode: numbers not in VGPU_OPS are NOT_SUPPORTED */
};

#ifdef __cplusplus
#define VGPU_OPS_CONSTEXPR_ constexpr
#else
#define VGPU_OPS_CONSTEXPR_
#endif

/* The opcode's name ("MEM_ALLOC"), or 0 for a number that is not an opcode. */
#define VGPU_OP_NAME_CASE_(name, number, flags, args, result) case number: return #name;
static VGPU_OPS_CONSTEXPR_ inline const char* vgpu_op_name(uint32_t op)
{
    switch (op) {
    VGPU_OPS(VGPU_OP_NAME_CASE_)
    default: return 0;
    }
}
/* The opcode's VGPU_OPF_* (0 for a number that is not an opcode). */
#define VGPU_OP_FLAGS_CASE_(name, number, flags, args, result) case number: return (flags);
static VGPU_OPS_CONSTEXPR_ inline uint32_t vgpu_op_flags(uint32_t op)
{
    switch (op) {
    VGPU_OPS(VGPU_OP_FLAGS_CASE_)
    default: return 0;
    }
}

#endif
