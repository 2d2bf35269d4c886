// Executes one copied command for one VM: validates every guest-supplied
// field (opcode, flags, sizes, handles, guest-physical ranges, device
// ranges), turns VM-local handles into backend objects, calls the backend,
// and owns the VM's handle tables and allocation table. One function per
// opcode (op_<NAME>, made from vgpu_ops.h's rows), spread over
// dispatch_*.cpp by topic.
//
// Guest errors become a status and a rate-limited log line; nothing here
// throws on guest input. Runs on the executor thread only.
#pragma once

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/allocation_table.h"
#include "kvmtool-gpu/devices/vgpu/backends/array_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/abi/blas_checks.h"
#include "kvmtool-gpu/abi/vgpu_abi_layout.h"
#include "kvmtool-gpu/devices/vgpu/backends/blas_library.h"
#include "kvmtool-gpu/devices/vgpu/backends/fft_library.h"
#include "kvmtool-gpu/devices/vgpu/backends/rand_library.h"
#include "kvmtool-gpu/devices/vgpu/backends/graph_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/virtual_memory_backend.h"
#include "kvmtool-gpu/devices/vgpu/command_ring.h"
#include "kvmtool-gpu/devices/vgpu/handle_table.h"
#include "kvmtool-gpu/devices/vgpu/host_alias.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"
#include "kvmtool-gpu/util/log.h"
#include "memmap/guest_memory.h"
#include "memmap/scatter_gather.h"
#include "kvmtool-gpu/devices/vgpu/guest_ram_remote.h"

namespace kvmgpu::vgpu {

class CommandDispatch final : public CommandSink {
public:
    // `handle_seed` (next_handle_seed()) makes this VM's handle numbers
    // differ from other VMs'.
    CommandDispatch(const memmap::GuestMemory& mem, DeviceBackends& devices, const VgpuOptions& opts,
                    VgpuCounters& counters, uint32_t handle_seed);
    ~CommandDispatch() override; // says how many guest-error lines the rate limit held back

    CommandResult execute(GuestCommand& cmd) override;

    // RESET: frees every allocation, module, stream and event through the
    // backend, then forgets all handles; contexts are back to the start
    // state (device 0's primary context current, vgpu_abi.h).
    void reset();
    // Re-reads the zero-copy device windows of guest RAM from the backend
    // (after registration, and after a recovery re-registered it).
    void refresh_ram_windows();

    const AllocationTable& allocations() const { return allocs_; }

    // Guest RAM is a copy of the VM's (a GPU server): reads fetch, writes
    // publish (guest_ram_remote.h). Set before the first command; `remote`
    // outlives the dispatch.
    void use_remote_ram(GuestRamRemote* remote) { remote_ram_ = remote; }
    bool ram_is_remote() const { return remote_ram_ != nullptr; }

private:
    // A guest context: what the guest's objects are scoped to. Every
    // context of a device shares the backend's one context on it (the
    // driver would give each its own address space; here a kernel could
    // reach memory another context of the same VM allocated).
    struct ContextEntry {
        uint32_t device;
        uint32_t flags; // CUctx_flags, as given
        bool primary;
    };
    struct PrimaryContext {
        uint64_t handle = 0; // 0 until first needed
        uint32_t retains = 0;
        uint32_t flags = 0;
    };
    struct ModuleEntry {
        BackendModule module;
    };
    struct FunctionEntry {
        BackendFunction function;
        uint64_t module; // VM handle of its module: unloading it frees the function
        ParamLayout params; // from the module: every launch must supply exactly this
    };
    using Handler = CommandResult (CommandDispatch::*)(GuestCommand&);
    static const std::array<Handler, VGPU_OP_MAX_> kHandlers; // below the class

    // Helpers shared by the handlers.
    CommandResult fail(uint32_t status, const char* why);
    CommandResult done(Status s, uint64_t r0 = 0, uint64_t r1 = 0);
    CommandResult query_result(Status s);
    Status backend_result(Status s);
    bool stream_of(uint64_t handle, BackendStream* out);
    // Whether the backend places device memory at guest RAM addresses (managed memory's need).
    bool managed_memory_placeable();
    // An attribute of a device that exists, as DEVICE_GET_ATTRIBUTE answers it.
    Status attribute_of(int device, int attribute, int* out);
    int managed_placeable_ = -1; // -1: not asked yet
    bool device_exists(uint64_t ordinal);
    // Device `device`'s primary context (made on first use; 0 if the table is full).
    uint64_t primary_context(uint32_t device);
    // Frees, through the backend, everything made in context `ctx` (after
    // the device's queued work when `drain`).
    void free_objects_of(uint64_t ctx, bool drain = true);
    // After device `lost` lost its objects to a sticky error: every other
    // device frees what the VM made there, or recovers too if the error
    // reached it, before the device model forgets the handles.
    void release_other_devices(int lost);
    // Forgets every context; device 0's primary one is current again.
    void restart_contexts();
    // ctx (0: none) becomes current, and the backend works on its device.
    void make_current(uint64_t ctx);
    // The device of context ctx (the current one's for 0).
    int device_of(uint64_t ctx);
    // op(stream, async) on the device that holds dptr: the current one as
    // asked, another one (unified addressing) after stream s drained and
    // synchronously there, as a copy between devices is.
    template <class Op>
    Status on_device_of(uint64_t dptr, BackendStream s, bool async, Op op) {
        const int device = device_of(allocs_.owner_containing(dptr));
        if (device == selected_device_) return op(s, async);
        Status st = backend().stream_synchronize(s);
        if (st != VGPU_SUCCESS) return st;
        devices_.select(device);
        st = op(BackendStream{0}, false);
        devices_.select(selected_device_);
        return st;
    }
    // Host view of guest RAM, as it is here (a remote copy not filled);
    // nullptr outside RAM.
    uint8_t* guest_view(uint64_t gpa, uint64_t bytes);
    // ... that the command reads (fetched first when the RAM is remote), or
    // writes (sent back to the VM before the command completes); nullptr
    // outside RAM or when the VM is out of reach.
    const uint8_t* guest_read(uint64_t gpa, uint64_t bytes);
    uint8_t* guest_write(uint64_t gpa, uint64_t bytes);
    uint8_t* guest_span(uint64_t gpa, uint64_t bytes, bool htod) {
        return htod ? const_cast<uint8_t*>(guest_read(gpa, bytes)) : guest_write(gpa, bytes);
    }
    // The ranges of sg_list_ (each inside RAM), the same way.
    bool sg_ranges_ready(bool htod);
    // Before the completion: the bytes written to a remote copy go back.
    bool publish_written();
    // A stream recording into a capture (its id in *id): its commands run at a launch.
    bool capturing(BackendStream s, uint64_t* id = nullptr);
    // The command's arg[] as opcode Op's row declares it (vgpu_ops.h): the
    // struct its handler reads instead of indexing arg[]. A handler shared
    // by several opcodes names them all (SameRows), and each row must
    // declare the same struct, so a row given another layout later fails to
    // compile rather than being read in the first row's.
    template <uint16_t Op, uint16_t... SameRows>
    static auto args_of(const GuestCommand& c) {
        using Args = typename abi::VgpuOpTypes<Op>::Args;
        static_assert((std::is_same_v<Args, typename abi::VgpuOpTypes<SameRows>::Args> && ...),
                      "the opcodes a handler shares declare one argument struct");
        static_assert(sizeof(Args) <= sizeof c.desc.arg, "a row's arguments fit arg[]");
        Args a;
        std::memcpy(&a, c.desc.arg, sizeof a);
        return a;
    }
    static bool is_async(const GuestCommand& c) { return c.desc.flags & VGPU_CMD_FLAG_ASYNC; }
    static bool is_cooperative(const GuestCommand& c) { return c.desc.flags & VGPU_CMD_FLAG_COOPERATIVE; }
    void drop_handles();

    // The handler of each opcode: op_<NAME> for each row of VGPU_OPS
    // (vgpu_ops.h), defined in its topic's dispatch_*.cpp; kHandlers below
    // the class is made from the same rows. Helpers by topic follow; a
    // handler shared by several opcodes is a helper their op_<NAME> call.
#define KVMGPU_DISPATCH_HANDLER(NAME, number, facts, args, results) CommandResult op_##NAME(GuestCommand&);
    VGPU_OPS(KVMGPU_DISPATCH_HANDLER)
#undef KVMGPU_DISPATCH_HANDLER

    // dispatch_contexts.cpp
    CommandResult set_peer_access(uint64_t peer, uint64_t flags, bool enable); // CTX_ENABLE/DISABLE_PEER_ACCESS
    // dispatch_memory.cpp
    CommandResult copy_host(GuestCommand&); // MEMCPY_HTOD, MEMCPY_DTOH
    CommandResult copy_sg(GuestCommand&); // MEMCPY_HTOD_SG, MEMCPY_DTOH_SG
    CommandResult sg_device_walk(const GuestCommand&, const vgpu_args_memcpy_sg& a, bool htod, BackendStream s);
    // Copies the guest's list of `count` vgpu_sg_entry (count already
    // bounded by VGPU_MAX_SG_ENTRIES) at list_gpa into sg_list_, each entry
    // read once; false if the list is not in guest RAM.
    bool read_sg_list(uint64_t list_gpa, uint64_t count);
    CommandResult set_memory(GuestCommand&); // MEMSET_D8, MEMSET_D32, MEMSET_D16
    CommandResult set_memory_2d(GuestCommand&); // MEMSET_2D_D8, _D16, _D32
    // dispatch_stream_values.cpp
    CommandResult stream_value(GuestCommand&); // STREAM_WRITE_VALUE, STREAM_WAIT_VALUE
    // dispatch_stream_attributes.cpp: why a STREAM_SET_ATTRIBUTE value is refused, or nullptr.
    const char* stream_attribute_why(uint32_t attribute, const vgpu_stream_attr_value& v);
    // dispatch_host_register.cpp
    void unregister_all();
    // dispatch_graphs.cpp
    CommandResult set_kernel_node_params(GuestCommand&); // GRAPH_KERNEL_NODE_SET_PARAMS, GRAPH_EXEC_KERNEL_NODE_SET_PARAMS
    CommandResult launch_graph(GuestCommand&); // GRAPH_LAUNCH, GRAPH_UPLOAD
    // A graph the VM holds: its nodes' VM handles by backend node, and how
    // many nodes it has (against max_graph_nodes).
    // Guest RAM a graph's copies read (fetched before each launch) or write
    // (sent back after it): kept only when guest RAM is a remote copy.
    struct GuestRamUse {
        uint64_t gpa, bytes;
        bool written;
        BackendGraphNode node; // 0: a captured copy
    };
    struct GraphEntry {
        BackendGraph graph = 0;
        uint64_t nodes = 0;
        std::map<BackendGraphNode, uint64_t> handles;
        // A clone: the VM handle of the graph it was cloned from, and each of
        // that graph's nodes then -> its copy here (while the copy lives).
        uint64_t cloned_from = 0;
        std::map<BackendGraphNode, BackendGraphNode> copies;
        std::vector<uint64_t> allocations; // its memory nodes' graph allocations (held)
        std::vector<GuestRamUse> guest_ram;
        // A conditional node's body: the VM handle of the graph holding the
        // node, and the node. The driver owns it; it goes with the node.
        uint64_t body_of = 0;
        BackendGraphNode body_node = 0;
        // The graph a capture on this stream made (named to the guest while
        // the capture runs): the capture's until STREAM_END_CAPTURE.
        BackendStream capture_stream = 0;
        std::vector<uint64_t> conditionals; // the conditional handles made for it
    };
    struct GraphNodeEntry {
        uint64_t graph; // VM handle of its graph
        BackendGraphNode node;
    };
    struct GraphExecEntry {
        BackendGraphExec exec = 0;
        uint64_t nodes = 0;
        uint64_t graph = 0; // VM handle of the graph instantiated (its nodes name the exec's)
        uint64_t flags = 0; // as GRAPH_INSTANTIATE accepted them
        std::vector<uint64_t> allocations; // the graph's when instantiated (held)
        std::vector<GuestRamUse> guest_ram; // the graph's when instantiated or updated
    };
    // A remote copy of guest RAM, before a graph's launch and after it.
    bool fetch_graph_reads(const std::vector<GuestRamUse>& uses);
    void mark_graph_writes(const std::vector<GuestRamUse>& uses);
    // The backend's graphs, or nullptr after the refusal was logged.
    GraphBackend* graph_backend();
    // The guest's graph node handle for backend node n of graph g (issued on first sight).
    std::optional<uint64_t> node_handle(uint64_t graph, GraphEntry& g, BackendGraphNode n);
    // A new node of `spec` in the graph named by `graph`, counted against the quota.
    CommandResult add_graph_node(uint64_t graph, const GraphNodeSpec& spec);
    // The kernel node of a kernel-node command (vgpu_graph_kernel_payload); an empty `why` when valid.
    struct KernelNode {
        GraphNodeSpec spec;
        uint64_t target = 0; // the command's graph or node (vgpu_launch_args::stream)
        uint64_t exec = 0;   // the payload's exec field
        uint32_t status = VGPU_SUCCESS;
        const char* why = nullptr;
    };
    KernelNode kernel_node(const GuestCommand& c);
    void forget_graph(const GraphEntry& g);
    // dispatch_graph_conditionals.cpp: the bodies of graph's conditional
    // nodes (of `node` alone when not 0), and theirs, forgotten: the driver
    // dropped them with the node or graph.
    void forget_bodies(uint64_t graph, BackendGraphNode node);
    // The handles of graph's body graphs (of `node` alone when not 0).
    std::vector<uint64_t> bodies_of(uint64_t graph, BackendGraphNode node);
    // The graph's nodes and its bodies' (an exec copies both).
    uint64_t nodes_with_bodies(uint64_t graph);
    // A capture that began on s (`began` SUCCESS) is counted and its id kept; returns `began`.
    Status capture_began(BackendStream s, Status began);
    // The VM handle of backend graph g, if one names it.
    std::optional<uint64_t> handle_of_graph(BackendGraph g);
    // When the capture on s ends: the graph it made, if the guest was given
    // a handle for it (0 else), now an ordinary graph when `kept`, else
    // forgotten (the driver dropped it).
    uint64_t settle_capture_graph(BackendStream s, bool kept);
    // Node handles of graph (payload, count of them) -> backend nodes; the why when one is not that graph's.
    const char* nodes_of_graph(uint64_t graph, const uint8_t* payload, uint64_t count,
                               std::vector<BackendGraphNode>* out);
    void destroy_graphs_of(uint64_t ctx);
    // dispatch_graph_node_controls.cpp: the node (of this context), if the
    // device's graph has it as CUgraphNodeType `type`; else *st and why not.
    const GraphNodeEntry* node_of_type(uint64_t node, uint32_t type, Status* st, const char** why);
    // The exec (of this context) and a node of the graph it was instantiated from.
    const char* exec_and_node(uint64_t exec, uint64_t node, const GraphExecEntry** x, const GraphNodeEntry** n,
                              Status* st);
    // EVENT_DESTROY of an event a graph node may name: kept until its context goes.
    bool retire_if_in_graph(BackendEvent e);
    void free_retired_events_of(uint64_t ctx);
    // dispatch_graph_topology.cpp: GRAPH_EDGES' pairs (kind VGPU_GRAPH_EDGES_*)
    // about a graph or node; *graph its graph's VM handle. nullptr, or why not.
    const char* graph_edge_pairs(uint64_t handle, uint64_t kind, uint64_t* graph,
                                 std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* out, Status* st);
    // Ends the captures open on ctx's streams (their graphs dropped): before
    // its objects are freed, which the driver refuses during a global capture.
    void end_captures_of(uint64_t ctx);
    // Whether a captured command (VGPU_OPF_CAPTURED), counted while a
    // capture is open, takes the VM past max_graph_nodes.
    bool capture_quota_exceeded();
    // dispatch_graph_memory.cpp: graph allocations (a memory node's address),
    // the VM's, in allocs_ and its quota, from the node's creation until no
    // graph, exec or open capture holds the node.
    struct GraphAllocation {
        uint64_t bytes = 0;
        uint32_t holders = 0;
        uint64_t ctx = 0; // the context that made it
    };
    // Records a new graph allocation (one holder); false if the backend's
    // range overlaps one recorded (a backend bug).
    bool add_graph_allocation(uint64_t dptr, uint64_t bytes);
    void hold_graph_allocations(const std::vector<uint64_t>& dptrs);
    // Drops one hold of each; one no longer held leaves allocs_ and the backend.
    void drop_graph_allocations(const std::vector<uint64_t>& dptrs);
    // The allocations an open capture made, when the capture ends (graph 0: none came of it).
    void end_capture_allocations(uint64_t capture_id, GraphEntry* graph);
    // dptr starts a graph allocation of this VM on the current context's device.
    bool graph_allocation_here(uint64_t dptr);
    // The VM's graph allocations on `device`, in bytes.
    uint64_t graph_allocation_bytes(int device);
    // Why `bytes` more would break the VM's quota or allocation count, in *why; false if it fits.
    bool quota_refuses(uint64_t bytes, char (&why)[160]) const;
    // dispatch_vmm.cpp: cuMemAddressReserve, cuMemCreate, cuMemMap...
    // The virtual memory calls of `be` (the current context's device unless
    // named), NOT_SUPPORTED each where it has none; and its granule.
    VirtualMemoryBackend& vmm_backend(GpuBackend* be = nullptr);
    bool vmm_granule(uint64_t* out, GpuBackend* be = nullptr);
    // The mappings that exactly tile [va, va + bytes), in order; empty when
    // the range has a hole or cuts a mapping.
    std::vector<uint64_t> vmm_tiling(uint64_t va, uint64_t bytes) const;
    void vmm_unmap_one(uint64_t va);
    void vmm_free_owned_by(uint64_t ctx); // with its context
    // dispatch_arrays.cpp
    // One side of a MEMCPY_3D checked (its kind, its extent or span, its
    // memory this VM's on the selected device) and translated; VGPU_SUCCESS
    // and *out filled, else the status with *why.
    uint32_t copy_side(const vgpu_copy_side& in, const vgpu_copy3d& c, bool destination, CopySide* out, const char** why);
    // dispatch_textures.cpp
    CommandResult create_sampled_object(GuestCommand&); // TEX_OBJECT_CREATE, SURF_OBJECT_CREATE
    CommandResult destroy_sampled_object(GuestCommand&); // TEX_OBJECT_DESTROY, SURF_OBJECT_DESTROY
    // A texture's or surface's resource checked and its handle translated.
    uint32_t check_resource(vgpu_tex_resource* r, bool surface, const char** why);
    // Destroys, through the backend, the texture and surface objects ctx made.
    void free_sampled_objects_of(uint64_t ctx);
    // dispatch_blas.cpp
    struct BlasEntry {
        BackendBlas library;
        BackendStream stream; // the handle's, for reading GEMM_POINTERS' arrays in order
    };
    // The selected device's library, nullptr (logged once) when the backend has none.
    BlasLibrary* blas_library();
    template <class Call>
    const char* blas_call(const GuestCommand& c, Call* call, BlasEntry** entry);
    // [dptr, dptr + bytes) is the VM's (one allocation, variable or RAM
    // window) and not memory another device holds: a library may touch it.
    bool library_range_ok(uint64_t dptr, uint64_t bytes);
    const char* blas_operands_ok(const BlasPlan& plan); // nullptr, or why not
    void destroy_blas_of(uint64_t ctx);
    // dispatch_rand.cpp
    // SET_STREAM, SET_SEED, SET_OFFSET, SET_ORDERING, SET_DIMENSIONS: op's value (or stream) for a generator.
    CommandResult rand_set(uint16_t op, uint64_t generator, uint64_t v);
    CommandResult rand_set_value(const GuestCommand&); // the four whose rows are vgpu_args_handle_value
    struct RandEntry {
        BackendRand gen;
        uint32_t type; // curandRngType_t: its family decides what each call may do
    };
    void destroy_rand_of(uint64_t ctx);
    // dispatch_fft.cpp
    CommandResult fft_add_plan(const FftShape& shape, bool auto_allocation);
    struct FftEntry {
        BackendFft plan;
        FftShape shape;
        uint64_t work;        // the plan's work area; charged to the quota when the library allocates it
        bool auto_allocation; // else the program's area (work_area) is the work area
        uint64_t work_area;   // cufftSetWorkArea's (0: none), checked again at each exec
    };
    void destroy_fft_of(uint64_t ctx);
    // A limit the guest set on one device: its start value (restored at
    // RESET) and the device memory charged for it; PERSISTING_L2's hint.
    struct LimitState {
        uint64_t start = 0, charged = 0, hint = 0;
        bool known = false; // start read from the backend
    };
    // Device memory the driver reserves for `value` (over `start`) of
    // `limit` on the selected device; UINT64_MAX when it cannot tell.
    uint64_t limit_cost(uint32_t limit, uint64_t value, uint64_t start);
    bool recharge(LimitState& st, uint64_t cost);
    void restore_limits();
    // The function, stream and launch shape of a LAUNCH_KERNEL_PACKED; an
    // empty `why` when they are valid.
    struct LaunchShape {
        const FunctionEntry* function = nullptr;
        BackendStream stream = 0;
        Dim3 grid, block;
        uint32_t shared = 0;
        uint32_t params = 0; // the parameter buffer's bytes
        uint32_t status = VGPU_SUCCESS;
        const char* why = nullptr;
    };
    LaunchShape launch_shape(const GuestCommand& c, bool with_stream = true);
    // Copies a packed parameter buffer of `bytes` (at most param_buffer_'s
    // size) into param_buffer_: from the payload's `len` bytes at `p` when
    // it fits the payload's `room`, else from the guest-physical address
    // that the payload holds there. nullptr, or why not.
    const char* take_param_buffer(const uint8_t* p, uint32_t len, uint32_t room, uint64_t bytes);
    const char* take_cluster(const GuestCommand& c, LaunchMode* mode);
    const char* take_name(const GuestCommand& c, std::string* name);
    // dispatch_kernels.cpp: the VM's handle for a function of a module.
    std::optional<CommandResult> function_handle(uint64_t module, BackendFunction f, ParamLayout* layout,
                                                 uint64_t* out);
    static void put_param_descs(GuestCommand& c, const ParamLayout& params, uint64_t first);
    // FUNC_MAX_ACTIVE_CLUSTERS / FUNC_MAX_CLUSTER_SIZE: the shape checked, then the backend's answer.
    CommandResult cluster_question(GuestCommand& c, bool active);

    const memmap::GuestMemory& mem_;
    DeviceBackends& devices_; // one backend per guest device
    // The backend of the device the dispatch works on now (selected_device_,
    // or another one for a moment in on_device_of and the like).
    GpuBackend& backend() const { return devices_.current(); }
    const VgpuOptions opts_;
    VgpuCounters& counters_;
    RateLimiter log_limit_;
    const GuestCommand* current_ = nullptr; // for the log line

    // Every table below is scoped by context (HandleTable's owner).
    HandleTable<ContextEntry> contexts_;
    std::vector<PrimaryContext> primaries_; // by device ordinal
    std::set<std::pair<uint64_t, uint64_t>> peer_access_; // (context, peer context) enabled
    uint64_t ctx_ = 0;                      // the current context; 0: none
    int selected_device_ = 0;               // the current context's device (devices_ selected)
    HandleTable<ModuleEntry> modules_;
    HandleTable<FunctionEntry> functions_;
    // A registered guest buffer: its device address (the guest RAM window's
    // for one contiguous piece; else its alias's, none on huge host pages),
    // and what it is counted for against the VM's limits.
    struct Registration {
        std::shared_ptr<HostAlias> alias;
        uint64_t dptr = 0;
        uint64_t bytes = 0;    // against max_registered_bytes
        uint64_t mappings = 0; // the alias's, against alias_allowance_
        uint64_t charge = 0;   // the driver's cost, against the device-memory quota
    };
    HandleTable<Registration> registrations_;
    uint64_t registered_bytes_ = 0, registered_bytes_limit_ = 0;
    uint64_t alias_mappings_ = 0, alias_allowance_ = 0; // the allowance: from AliasBudget::process()
    void forget_registration(const Registration& r);
    std::map<std::pair<int, uint32_t>, LimitState> limits_; // by (device, CUlimit), those the guest set
    // An array: the backend's, its shape, and what it costs the VM's quota.
    struct ArrayEntry {
        BackendArray array = 0;
        ArrayShape shape;
        uint64_t charged = 0;
    };
    HandleTable<ArrayEntry> arrays_;
    // Texture and surface objects are the driver's values (a kernel reads
    // them as parameters, which the VMM never looks into), so they are
    // known by (device, value) rather than given handles of the VMM's.
    struct SampledObject {
        uint64_t owner; // the context that made it
        bool surface;
        vgpu_tex_resource resource; // as the guest gave it (its array handle, not the backend's)
    };
    std::map<std::pair<int, uint64_t>, SampledObject> sampled_;
    HandleTable<BlasEntry> blas_;
    HandleTable<RandEntry> rand_;
    HandleTable<FftEntry> fft_;
    std::vector<uint64_t> blas_pointers_; // GEMM_POINTERS' checked A, B, C arrays
    // The last GEMM_POINTERS call's arrays, read and checked at
    // device_write_epoch_: the next call with the same arrays, and no
    // command between that may have written device memory, uses what
    // blas_pointers_ holds instead of reading the arrays back (a synchronous
    // copy that would wait for every earlier gemm).
    struct GemmPointersKey {
        uint64_t epoch = 0, ctx = 0, handle = 0;
        uint64_t arrays[3] = {}, batch = 0, bytes[3] = {}, align[3] = {};
        bool valid = false;
        bool operator==(const GemmPointersKey&) const = default;
    };
    GemmPointersKey gemm_pointers_cache_;
    uint64_t device_write_epoch_ = 0;
    bool keeps_device_memory_ = false; // set by a handler: this command wrote nothing cached
    char blas_why_[200] = {};
    bool blas_missing_logged_ = false;
    HandleTable<BackendStream> streams_;
    HandleTable<BackendEvent> events_;
    HandleTable<GraphEntry> graphs_;
    HandleTable<GraphNodeEntry> graph_nodes_;
    HandleTable<GraphExecEntry> graph_execs_;
    // Events any graph node was given (the driver's node holds the CUevent
    // without a reference), and those destroyed by the guest while so named:
    // alive until their context goes, counted against the event table.
    std::set<BackendEvent> graph_events_;
    std::vector<std::pair<uint64_t, BackendEvent>> retired_events_; // (owner context, event)
    uint64_t graph_node_count_ = 0; // in graphs and execs, against max_graph_nodes
    // GRAPH_NEXT_NODE_DEPENDENCIES': handles, looked up when the next
    // command makes its node, dropped after any other command (execute()).
    struct NextNodeDependencies {
        uint64_t graph = 0;
        std::vector<uint64_t> handles;
    } next_node_deps_;
    std::map<uint64_t, GraphAllocation> graph_allocations_;        // by address
    std::map<uint64_t, std::vector<uint64_t>> capture_allocations_; // by open capture's id
    // The capture each capturing stream was seen in: the driver gives no id
    // for a capture it has invalidated, and its allocations must still go.
    std::map<BackendStream, uint64_t> capture_of_stream_;
    std::map<uint64_t, std::vector<GuestRamUse>> capture_ram_; // by open capture's id (remote guest RAM)
    std::map<int, uint64_t> graph_memory_high_;                      // by device: bytes since the last reset
    uint32_t open_captures_ = 0;    // begun and not yet ended (the driver may have ended them)
    uint64_t captured_ops_ = 0;     // stream-ordered commands while a capture is open
    AllocationTable allocs_;
    // Virtual memory management: physical memory by VM handle (owner: its
    // context), reservations and mappings by start address.
    struct PhysicalEntry {
        uint64_t backend = 0;
        uint64_t bytes = 0;
        uint32_t mappings = 0;
        bool released = false; // cuMemRelease'd: gone with its last mapping
    };
    HandleTable<PhysicalEntry> vmm_physical_;
    struct VmmReservation {
        uint64_t bytes, owner;
    };
    std::map<uint64_t, VmmReservation> vmm_reserved_;
    struct VmmMapping {
        uint64_t bytes, physical, physical_owner; // the VM handle and its context
        uint32_t access;                          // VGPU_VMM_ACCESS_*
    };
    std::map<uint64_t, VmmMapping> vmm_maps_;

    // Reused between commands so large transfers do not allocate each time.
    std::vector<memmap::GuestRange> sg_list_;
    GuestRamRemote* remote_ram_ = nullptr;
    struct WrittenSpan {
        uint64_t gpa;
        uint8_t* host;
        uint64_t bytes;
    };
    std::vector<WrittenSpan> written_; // this command's writes to a remote copy
    std::vector<RamRegion> ram_regions_; // guest RAM as the device walk sees it, made on first use
    std::vector<uint8_t> module_image_;
    // A packed launch's parameters, copied out of the command or guest RAM.
    alignas(16) std::array<uint8_t, VGPU_MAX_PARAM_BYTES> param_buffer_;
};

// Indexed by opcode; nullptr = not an opcode (NOT_SUPPORTED).
inline constexpr std::array<CommandDispatch::Handler, VGPU_OP_MAX_> CommandDispatch::kHandlers = [] {
    std::array<Handler, VGPU_OP_MAX_> t{};
#define KVMGPU_DISPATCH_ENTRY(NAME, number, facts, args, results) t[VGPU_OP_##NAME] = &CommandDispatch::op_##NAME;
    VGPU_OPS(KVMGPU_DISPATCH_ENTRY)
#undef KVMGPU_DISPATCH_ENTRY
    return t;
}();

} // namespace kvmgpu::vgpu
