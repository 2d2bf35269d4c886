// Each argument layout's fields pinned to the arg[] words they travel in.
// The device decodes a command into its row's struct (args_of, vgpu_ops.h)
// while the guest library still writes most commands word by word
// (c.arg[i]); the layout hash (VgpuOpTable.LayoutIsTheOneRecordedForThisVersion)
// counts only sizes, so two fields swapped, or one put before another,
// would change what the device reads with nothing else failing. These words
// are the wire: a change here is an ABI change (bump VGPU_ABI_VERSION and
// the guest's writes with it).
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <type_traits>
#include <typeindex>
#include <typeinfo>

#include "kvmtool-gpu/abi/vgpu_abi_layout.h"

namespace kvmgpu::abi {
namespace {

struct Word {
    const char* field;
    size_t offset; // as compiled
    size_t wire;   // where the guest puts it: 8 bytes a word, a uint32_t pair's second at +4
};
#define WORD(S, f, word) Word{#S "." #f, offsetof(S, f), 8 * (word)}
#define HIGH_HALF(S, f, word) Word{#S "." #f, offsetof(S, f), 8 * (word) + 4}
const Word kWords[] = {
    WORD(vgpu_args_handle, handle, 0),
    WORD(vgpu_args_flags, flags, 0),
    WORD(vgpu_args_bytes, bytes, 0),
    WORD(vgpu_args_dptr, dptr, 0),
    WORD(vgpu_args_device, device, 0),
    WORD(vgpu_args_device_attribute, attribute, 0), WORD(vgpu_args_device_attribute, device, 1),
    WORD(vgpu_args_peer_devices, device, 0), WORD(vgpu_args_peer_devices, peer, 1),
    WORD(vgpu_args_p2p_attribute, attribute, 0), WORD(vgpu_args_p2p_attribute, device, 1),
    WORD(vgpu_args_p2p_attribute, peer, 2),
    WORD(vgpu_args_device_flags, device, 0), WORD(vgpu_args_device_flags, flags, 1),
    WORD(vgpu_args_ctx_create, flags, 0), WORD(vgpu_args_ctx_create, device, 1),
    WORD(vgpu_args_peer_access, peer_context, 0), WORD(vgpu_args_peer_access, flags, 1),
    WORD(vgpu_args_memcpy, dst, 0), WORD(vgpu_args_memcpy, src, 1), WORD(vgpu_args_memcpy, bytes, 2),
    WORD(vgpu_args_memcpy, stream, 3),
    WORD(vgpu_args_memcpy_sg, dptr, 0), WORD(vgpu_args_memcpy_sg, sg_gpa, 1), WORD(vgpu_args_memcpy_sg, count, 2),
    WORD(vgpu_args_memcpy_sg, stream, 3), WORD(vgpu_args_memcpy_sg, strategy, 4), WORD(vgpu_args_memcpy_sg, total,
    5),
    WORD(vgpu_args_memcpy_peer, dst, 0), WORD(vgpu_args_memcpy_peer, dst_context, 1), WORD(vgpu_args_memcpy_peer,
    src, 2), WORD(vgpu_args_memcpy_peer, src_context, 3), WORD(vgpu_args_memcpy_peer, bytes, 4),
    WORD(vgpu_args_memcpy_peer, stream, 5),
    WORD(vgpu_args_memset, dptr, 0), WORD(vgpu_args_memset, value, 1), WORD(vgpu_args_memset, count, 2),
    WORD(vgpu_args_memset, stream, 3),
    WORD(vgpu_args_memset_2d, dptr, 0), WORD(vgpu_args_memset_2d, pitch, 1), WORD(vgpu_args_memset_2d, value, 2),
    WORD(vgpu_args_memset_2d, width, 3), WORD(vgpu_args_memset_2d, height, 4), WORD(vgpu_args_memset_2d, stream,
    5),
    WORD(vgpu_args_stream_value, stream, 0), WORD(vgpu_args_stream_value, dptr, 1), WORD(vgpu_args_stream_value,
    value, 2), WORD(vgpu_args_stream_value, flags, 3), WORD(vgpu_args_stream_value, bytes, 4),
    WORD(vgpu_args_guest_range, gpa, 0), WORD(vgpu_args_guest_range, bytes, 1),
    WORD(vgpu_args_host_register, sg_gpa, 0), WORD(vgpu_args_host_register, count, 1),
    WORD(vgpu_args_host_register, total, 2), WORD(vgpu_args_host_register, flags, 3),
    WORD(vgpu_args_param_info, function, 0), WORD(vgpu_args_param_info, first, 1),
    WORD(vgpu_args_module_functions, module, 0), WORD(vgpu_args_module_functions, first, 1),
    WORD(vgpu_args_attribute, handle, 0), WORD(vgpu_args_attribute, attribute, 1),
    WORD(vgpu_args_set_attribute, handle, 0), WORD(vgpu_args_set_attribute, attribute, 1),
    WORD(vgpu_args_set_attribute, value, 2),
    WORD(vgpu_args_on_stream, handle, 0), WORD(vgpu_args_on_stream, stream, 1),
    WORD(vgpu_args_wait_event, stream, 0), WORD(vgpu_args_wait_event, event, 1), WORD(vgpu_args_wait_event, flags,
    2),
    WORD(vgpu_args_two_handles, first, 0), WORD(vgpu_args_two_handles, second, 1),
    WORD(vgpu_args_name_lookup, module, 0), WORD(vgpu_args_name_lookup, name_bytes, 1),
    WORD(vgpu_args_occupancy, function, 0), WORD(vgpu_args_occupancy, block_threads, 1), WORD(vgpu_args_occupancy,
    shared_bytes, 2), WORD(vgpu_args_occupancy, flags, 3),
    WORD(vgpu_args_cluster_occupancy, function, 0), WORD(vgpu_args_cluster_occupancy, grid, 1),
    HIGH_HALF(vgpu_args_cluster_occupancy, block, 2), WORD(vgpu_args_cluster_occupancy, shared_bytes, 4),
    HIGH_HALF(vgpu_args_cluster_occupancy, cluster, 4),
    WORD(vgpu_args_available_shared, function, 0), WORD(vgpu_args_available_shared, blocks, 1),
    WORD(vgpu_args_available_shared, block_threads, 2),
    WORD(vgpu_args_ctx_limit, limit, 0), WORD(vgpu_args_ctx_limit, value, 1), WORD(vgpu_args_ctx_limit, set, 2),
    WORD(vgpu_args_vmm_reserve, bytes, 0), WORD(vgpu_args_vmm_reserve, alignment, 1), WORD(vgpu_args_vmm_reserve,
    address, 2),
    WORD(vgpu_args_va_range, address, 0), WORD(vgpu_args_va_range, bytes, 1),
    WORD(vgpu_args_vmm_map, address, 0), WORD(vgpu_args_vmm_map, bytes, 1), WORD(vgpu_args_vmm_map, offset, 2),
    WORD(vgpu_args_vmm_map, physical, 3),
    WORD(vgpu_args_vmm_access, address, 0), WORD(vgpu_args_vmm_access, bytes, 1), WORD(vgpu_args_vmm_access,
    device, 2), WORD(vgpu_args_vmm_access, access, 3),
    WORD(vgpu_args_begin_capture, stream, 0), WORD(vgpu_args_begin_capture, mode, 1),
    WORD(vgpu_args_memcpy_node, graph, 0), WORD(vgpu_args_memcpy_node, direction, 1), WORD(vgpu_args_memcpy_node,
    dst, 2), WORD(vgpu_args_memcpy_node, src, 3), WORD(vgpu_args_memcpy_node, bytes, 4),
    WORD(vgpu_args_memset_node, graph, 0), WORD(vgpu_args_memset_node, dptr, 1), WORD(vgpu_args_memset_node,
    value, 2), WORD(vgpu_args_memset_node, element_bytes, 3), WORD(vgpu_args_memset_node, count, 4),
    WORD(vgpu_args_dependencies, graph, 0), WORD(vgpu_args_dependencies, pairs, 1), WORD(vgpu_args_dependencies,
    remove, 2),
    WORD(vgpu_args_get_nodes, graph, 0), WORD(vgpu_args_get_nodes, first, 1),
    WORD(vgpu_args_next_node_dependencies, graph, 0), WORD(vgpu_args_next_node_dependencies, count, 1),
    WORD(vgpu_args_next_node_dependencies, append, 2),
    WORD(vgpu_args_stream, stream, 0),
    WORD(vgpu_args_sampled_resource, object, 0), WORD(vgpu_args_sampled_resource, surface, 1),
    WORD(vgpu_args_handle_value, handle, 0), WORD(vgpu_args_handle_value, value, 1),
    WORD(vgpu_args_blas_workspace, handle, 0), WORD(vgpu_args_blas_workspace, dptr, 1),
    WORD(vgpu_args_blas_workspace, bytes, 2),
    WORD(vgpu_args_rand_generate, generator, 0), WORD(vgpu_args_rand_generate, dptr, 1),
    WORD(vgpu_args_rand_generate, count, 2), WORD(vgpu_args_rand_generate, kind, 3), WORD(vgpu_args_rand_generate,
    mean_bits, 4), WORD(vgpu_args_rand_generate, stddev_bits, 5),
    WORD(vgpu_args_rand_create, type, 0),
    WORD(vgpu_args_plan_work_area, plan, 0), WORD(vgpu_args_plan_work_area, dptr, 1),
    WORD(vgpu_args_rand_table, table, 0), WORD(vgpu_args_rand_table, dptr, 1), WORD(vgpu_args_rand_table, bytes,
    2),
    WORD(vgpu_args_fft_plan, rank, 0), WORD(vgpu_args_fft_plan, nx, 1), WORD(vgpu_args_fft_plan, ny, 2),
    WORD(vgpu_args_fft_plan, nz, 3), WORD(vgpu_args_fft_plan, type, 4), WORD(vgpu_args_fft_plan, batch, 5),
    WORD(vgpu_args_fft_exec, plan, 0), WORD(vgpu_args_fft_exec, input, 1), WORD(vgpu_args_fft_exec, output, 2),
    WORD(vgpu_args_fft_exec, type, 3), WORD(vgpu_args_fft_exec, direction, 4),
    WORD(vgpu_launch_args, function, 0), WORD(vgpu_launch_args, stream, 1), WORD(vgpu_launch_args, grid, 2),
    HIGH_HALF(vgpu_launch_args, block, 3), WORD(vgpu_launch_args, shared_bytes, 5), HIGH_HALF(vgpu_launch_args,
    params, 5),
    WORD(vgpu_args_stream_attribute, stream, 0), WORD(vgpu_args_stream_attribute, attribute, 1),
    WORD(vgpu_args_stream_attribute, v.base, 2), WORD(vgpu_args_stream_attribute, v.bytes, 3),
    WORD(vgpu_args_stream_attribute, v.hit_ratio_bits, 4), HIGH_HALF(vgpu_args_stream_attribute, v.hit_prop, 4),
    WORD(vgpu_args_stream_attribute, v.miss_prop, 5), HIGH_HALF(vgpu_args_stream_attribute, v.value, 5),
    WORD(vgpu_args_graph_edges, handle, 0), WORD(vgpu_args_graph_edges, first, 1), WORD(vgpu_args_graph_edges, kind, 2),
    WORD(vgpu_args_event_node, graph, 0), WORD(vgpu_args_event_node, event, 1), WORD(vgpu_args_event_node, wait, 2),
    WORD(vgpu_args_node_event, exec, 0), WORD(vgpu_args_node_event, node, 1), WORD(vgpu_args_node_event, event, 2),
    WORD(vgpu_args_node_event, wait, 3), WORD(vgpu_args_node_enabled, exec, 0), WORD(vgpu_args_node_enabled, node, 1),
    WORD(vgpu_args_node_enabled, enabled, 2), WORD(vgpu_args_stream_bytes, stream, 0),
    WORD(vgpu_args_stream_bytes, bytes, 1), WORD(vgpu_args_stream_dptr, stream, 0), WORD(vgpu_args_stream_dptr, dptr, 1),
    WORD(vgpu_args_graph_bytes, graph, 0), WORD(vgpu_args_graph_bytes, bytes, 1), WORD(vgpu_args_graph_dptr, graph, 0),
    WORD(vgpu_args_graph_dptr, dptr, 1), WORD(vgpu_args_graph_mem_attribute, device, 0),
    WORD(vgpu_args_graph_mem_attribute, attribute, 1), WORD(vgpu_args_graph_mem_attribute, set, 2),
    WORD(vgpu_args_graph_mem_attribute, value, 3), WORD(vgpu_args_vmm_create, bytes, 0),
    WORD(vgpu_args_vmm_create, compression, 1), WORD(vgpu_args_device_attributes, device, 0),
    WORD(vgpu_args_device_attributes, first, 1),
    WORD(vgpu_args_conditional_create, graph, 0), WORD(vgpu_args_conditional_create, default_value, 1),
    WORD(vgpu_args_conditional_create, flags, 2), WORD(vgpu_args_conditional_node, graph, 0),
    WORD(vgpu_args_conditional_node, conditional, 1), WORD(vgpu_args_conditional_node, type, 2),
    WORD(vgpu_args_conditional_node, size, 3), WORD(vgpu_args_capture_graph, stream, 0),
    WORD(vgpu_args_capture_graph, first, 1), WORD(vgpu_args_capture_dependencies, stream, 0),
    WORD(vgpu_args_capture_dependencies, count, 1), WORD(vgpu_args_capture_dependencies, flags, 2),
    WORD(vgpu_args_capture_to_graph, stream, 0), WORD(vgpu_args_capture_to_graph, graph, 1),
    WORD(vgpu_args_capture_to_graph, mode, 2), WORD(vgpu_args_capture_to_graph, count, 3),
};
#undef WORD
#undef HIGH_HALF

struct Size {
    const char* name;
    std::type_index type;
    size_t bytes;
    size_t words;
};
#define SIZE(S, words) Size{#S, typeid(S), sizeof(S), (words)}
const Size kSizes[] = {
    SIZE(vgpu_args_handle, 1), SIZE(vgpu_args_flags, 1), SIZE(vgpu_args_bytes, 1), SIZE(vgpu_args_dptr, 1),
    SIZE(vgpu_args_device, 1), SIZE(vgpu_args_device_attribute, 2), SIZE(vgpu_args_peer_devices, 2),
    SIZE(vgpu_args_p2p_attribute, 3), SIZE(vgpu_args_device_flags, 2), SIZE(vgpu_args_ctx_create, 2),
    SIZE(vgpu_args_peer_access, 2), SIZE(vgpu_args_memcpy, 4), SIZE(vgpu_args_memcpy_sg, 6),
    SIZE(vgpu_args_memcpy_peer, 6), SIZE(vgpu_args_memset, 4), SIZE(vgpu_args_memset_2d, 6),
    SIZE(vgpu_args_stream_value, 5), SIZE(vgpu_args_guest_range, 2), SIZE(vgpu_args_host_register, 4),
    SIZE(vgpu_args_param_info, 2), SIZE(vgpu_args_module_functions, 2), SIZE(vgpu_args_attribute, 2),
    SIZE(vgpu_args_set_attribute, 3), SIZE(vgpu_args_on_stream, 2), SIZE(vgpu_args_wait_event, 3),
    SIZE(vgpu_args_two_handles, 2), SIZE(vgpu_args_name_lookup, 2), SIZE(vgpu_args_occupancy, 4),
    SIZE(vgpu_args_cluster_occupancy, 6), SIZE(vgpu_args_available_shared, 3), SIZE(vgpu_args_ctx_limit, 3),
    SIZE(vgpu_args_vmm_reserve, 3), SIZE(vgpu_args_va_range, 2), SIZE(vgpu_args_vmm_map, 4),
    SIZE(vgpu_args_vmm_access, 4), SIZE(vgpu_args_begin_capture, 2), SIZE(vgpu_args_memcpy_node, 5),
    SIZE(vgpu_args_memset_node, 5), SIZE(vgpu_args_dependencies, 3), SIZE(vgpu_args_get_nodes, 2),
    SIZE(vgpu_args_next_node_dependencies, 3),
    SIZE(vgpu_args_stream, 1), SIZE(vgpu_args_sampled_resource, 2), SIZE(vgpu_args_handle_value, 2),
    SIZE(vgpu_args_blas_workspace, 3), SIZE(vgpu_args_rand_generate, 6), SIZE(vgpu_args_rand_create, 1),
    SIZE(vgpu_args_plan_work_area, 2), SIZE(vgpu_args_rand_table, 3), SIZE(vgpu_args_fft_plan, 6),
    SIZE(vgpu_args_fft_exec, 5), SIZE(vgpu_launch_args, 6), SIZE(vgpu_args_stream_attribute, 6),
    SIZE(vgpu_args_graph_edges, 3), SIZE(vgpu_args_event_node, 3), SIZE(vgpu_args_node_event, 4),
    SIZE(vgpu_args_node_enabled, 3), SIZE(vgpu_args_stream_bytes, 2), SIZE(vgpu_args_stream_dptr, 2),
    SIZE(vgpu_args_graph_bytes, 2), SIZE(vgpu_args_graph_dptr, 2), SIZE(vgpu_args_graph_mem_attribute, 4), SIZE(vgpu_args_vmm_create, 2), SIZE(vgpu_args_device_attributes, 2),
    SIZE(vgpu_args_conditional_create, 3), SIZE(vgpu_args_conditional_node, 4), SIZE(vgpu_args_capture_graph, 2),
    SIZE(vgpu_args_capture_dependencies, 3), SIZE(vgpu_args_capture_to_graph, 4),
};
#undef SIZE

TEST(VgpuArgWords, EachFieldIsInTheWordTheGuestWrites) {
    for (const Word& w : kWords) EXPECT_EQ(w.offset, w.wire) << w.field;
}

TEST(VgpuArgWords, EachLayoutEndsAtItsLastWord) {
    for (const Size& s : kSizes) EXPECT_EQ(s.bytes, 8 * s.words) << s.name;
}

// A layout added to the table without its words here fails, so the pins
// keep up with vgpu_ops.h.
TEST(VgpuArgWords, EveryRowsArgumentsArePinned) {
    std::set<std::type_index> pinned;
    for (const Size& s : kSizes) pinned.insert(s.type);
#define PINNED_(name, number, flags, args, result)                                           \
    if constexpr (!std::is_void_v<VgpuOpTypes<number>::Args>) {                              \
        EXPECT_TRUE(pinned.count(typeid(VgpuOpTypes<number>::Args))) << #name " (" #args ")"; \
    }
    VGPU_OPS(PINNED_)
#undef PINNED_
}

} // namespace
} // namespace kvmgpu::abi
