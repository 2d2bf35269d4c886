// Internal to the guest CUDA API: what each kernel node this library added
// (or set, or cloned) was given, so cuGraphKernelNodeGetParams can hand back
// kernelParams pointers that stay valid until the node's parameters are set
// again or the node or its graph goes, as the driver's do. The vGPU keeps
// only the packed buffer, which the guest cannot read back. Captured
// kernel nodes are not known here.
#pragma once

#include <stdint.h>

#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"

namespace guest::cuda {

// node (of graph `graph`; 0: the graph it was kept for) now runs p with its
// packed buffer `packed` (l's layout). False when the table or the room for
// a buffer is short, or graph is 0 and node was not kept: the node is then
// not known here.
bool kernel_params_keep(uint64_t graph, uint64_t node, const CUDA_KERNEL_NODE_PARAMS& p, const FunctionLayout& l,
                        const uint8_t* packed);
// *out as kept; false if node is not known here.
bool kernel_params_of(uint64_t node, CUDA_KERNEL_NODE_PARAMS* out);
void kernel_params_forget_node(uint64_t node);
void kernel_params_forget_graph(uint64_t graph);
// Each kept node of graph `from` kept again for its copy in clone `to`.
void kernel_params_clone(uint64_t from, uint64_t to, uint64_t (*copy_of)(uint64_t clone, uint64_t node));

} // namespace guest::cuda
