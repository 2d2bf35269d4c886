// What the conformance guest's files share: the checks and their counts.
#pragma once

#include "guest-stub/programs/program_common.h"

void expect(const char* what, CUresult got, CUresult want);
void expect_true(const char* what, bool ok);
// Whether the VM's device-memory quota is below the GPU's memory (run with
// one VM gives the whole GPU unless --gpu-mem-quota says otherwise): the
// checks of what a quota refuses, but the GPU would not, run only then.
bool quota_below_device();
// A function handle the vGPU never issued (another generation of f's slot).
CUfunction bogus(CUfunction f);
// conformance_limits.cpp
void occupancy_and_limit_calls(CUfunction add, void** params);
void stream_ordered_calls();
void made_pools();
void cross_context_event_wait();
// conformance_arrays.cpp
void array_and_texture_calls();
// conformance_entry_points.cpp
void entry_point_calls();
// conformance_older_forms.cpp
void older_form_calls();
// conformance_graphs.cpp
void graph_calls(CUfunction add);
// conformance_graph_shape.cpp
void graph_shape_and_stream_attribute_calls(CUfunction add);
// conformance_graph_nodes.cpp
void graph_node_calls(CUfunction add);
// conformance_graph_memory.cpp
void graph_memory_calls(CUfunction add);
// conformance_graph_conditionals.cpp
void graph_conditional_calls(CUfunction add);
// conformance_managed.cpp
void vmm_and_managed_calls(CUfunction add);
// conformance_more.cpp
void library_support_calls(CUfunction add);
