// Internal to the guest CUDA API: the guest host functions of graphs,
// executable graphs and captures (see guest_cuda_graphs.h, host nodes), and
// which of this guest's streams capture. The device never calls guest code:
// a graph's host functions run here, after its device work.
#pragma once

#include <stdint.h>

#include "guest-stub/cuda/guest_cuda.h"

namespace guest::cuda {

// A host function of the graph, exec or capture `owner` (handle bits; a
// capture's: capture_owner(id)). node: the device's empty node standing for
// it (0 for a captured one). device_after: device work depends on it.
struct HostStep {
    uint64_t owner;
    uint64_t node;
    CUhostFn fn;
    void* data;
    bool device_after;
    uint64_t seq; // order of addition (copies keep it)
};
inline uint64_t capture_owner(uint64_t capture_id) { return capture_id | (1ull << 63); }

// nullptr when the table is full.
HostStep* host_step_add(uint64_t owner, uint64_t node, CUhostFn fn, void* data);
HostStep* host_step_of_node(uint64_t node);
// owner's step for node (an exec's copy names the graph's node), or nullptr.
HostStep* host_step_in(uint64_t owner, uint64_t node);
bool host_steps_any(uint64_t owner);
// Some step of owner has device work after it.
bool host_steps_blocked(uint64_t owner);
void host_steps_drop(uint64_t owner);
void host_step_drop_node(uint64_t node);
// Gives `to` the steps of `from` (moved, or copied when copy).
bool host_steps_give(uint64_t from, uint64_t to, bool copy);
// Gives the clone `to` a copy of each step of graph `from`, its node the
// clone's copy of the step's node (copy_of; a captured step keeps node 0),
// its order and whether device work follows it. false: the table is full,
// or a node has no copy.
bool host_steps_clone(uint64_t from, uint64_t to, uint64_t (*copy_of)(uint64_t clone, uint64_t node));
// Calls owner's functions in the order they were added.
void host_steps_run(uint64_t owner);

// Streams that capture, as this library saw captures begin, streams join
// (through an event recorded in a capture) and captures end.
uint64_t capture_of(CUstream s); // the capture id, 0 if none
// False only when no capture can be open in this process: every one begins
// here (cuStreamBeginCapture) and each began is recorded, or counted as
// unrecorded for good when the table was full.
bool capture_may_be_open();
void capture_began(CUstream s, uint64_t id, bool into_program_graph = false);
// The capture fills a graph the program made (cuStreamBeginCaptureToGraph).
bool capture_into_program_graph(uint64_t id);
void capture_ended(uint64_t id);
void capture_event_recorded(CUevent e, CUstream s);
void capture_stream_waits(CUstream s, CUevent e);
void capture_stream_destroyed(CUstream s);
// Work queued on s: a captured host function before it now has device work after it.
void capture_note_work(CUstream s);
// Says once on the console why a host function cannot keep its order.
void host_step_order_refused(const char* what);

} // namespace guest::cuda
