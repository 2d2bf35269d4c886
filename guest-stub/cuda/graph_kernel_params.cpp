// A fixed table (the guest library allocates nothing of its own here): a
// node whose buffer or parameter count is past an entry's room is not kept,
// and cuGraphKernelNodeGetParams answers NOT_SUPPORTED for it.
#include "guest-stub/cuda/graph_kernel_params.h"

#include <string.h>

namespace guest::cuda {

namespace {
constexpr unsigned kMaxNodes = 64, kBufferRoom = 1024, kMaxParams = 64;
struct KeptKernelNode {
    uint64_t graph, node; // node 0: a free entry
    CUDA_KERNEL_NODE_PARAMS params;
    alignas(16) uint8_t buffer[kBufferRoom];
    void* pointers[kMaxParams]; // into buffer, at each parameter's offset
};
KeptKernelNode g_nodes[kMaxNodes];
unsigned g_live;

KeptKernelNode* find(uint64_t node)
{
    if (node == 0 || g_live == 0)
        return nullptr;
    for (KeptKernelNode& k : g_nodes)
        if (k.node == node)
            return &k;
    return nullptr;
}

void release(KeptKernelNode& k)
{
    k.node = 0;
    --g_live;
}
} // namespace

bool kernel_params_keep(uint64_t graph, uint64_t node, const CUDA_KERNEL_NODE_PARAMS& p, const FunctionLayout& l,
                        const uint8_t* packed)
{
    if (KeptKernelNode* old = find(node)) {
        graph = graph != 0 ? graph : old->graph;
        release(*old);
    }
    if (graph == 0)
        return false; // a node not known here (captured) whose parameters were set
    if (l.bytes > kBufferRoom || l.count > kMaxParams)
        return false;
    for (KeptKernelNode& k : g_nodes) {
        if (k.node != 0)
            continue;
        k.graph = graph, k.node = node;
        memcpy(k.buffer, packed, l.bytes);
        for (uint32_t i = 0; i < l.count; ++i)
            k.pointers[i] = k.buffer + l.offsets[i];
        k.params = p;
        k.params.kernelParams = l.count ? k.pointers : nullptr;
        k.params.extra = nullptr; // given back as kernelParams, whichever form it came in
        ++g_live;
        return true;
    }
    return false;
}

bool kernel_params_of(uint64_t node, CUDA_KERNEL_NODE_PARAMS* out)
{
    const KeptKernelNode* k = find(node);
    if (k == nullptr)
        return false;
    *out = k->params;
    return true;
}

void kernel_params_forget_node(uint64_t node)
{
    if (KeptKernelNode* k = find(node))
        release(*k);
}

void kernel_params_forget_graph(uint64_t graph)
{
    for (KeptKernelNode& k : g_nodes)
        if (k.node != 0 && k.graph == graph)
            release(k);
}

void kernel_params_clone(uint64_t from, uint64_t to, uint64_t (*copy_of)(uint64_t clone, uint64_t node))
{
    for (unsigned i = 0; i < kMaxNodes && g_live != 0; ++i) {
        KeptKernelNode& k = g_nodes[i];
        if (k.node == 0 || k.graph != from)
            continue;
        const uint64_t copy = copy_of(to, k.node);
        const FunctionLayout* l = function_find(k.params.func);
        if (copy != 0 && l != nullptr)
            kernel_params_keep(to, copy, k.params, *l, k.buffer); // the copy is `to`'s: passed over
    }
}

} // namespace guest::cuda
