// Internal to the guest CUDA API: adding a node made by one vGPU call.
#pragma once

#include <stddef.h>

#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"

namespace guest::cuda {

// Sends c (a GRAPH_ADD_* call: result[0] the node), then the node's
// dependencies; the node is destroyed again if they fail. *out on success.
CUresult add_graph_node(Call& c, CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t n);

} // namespace guest::cuda
