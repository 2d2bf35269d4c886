// Fixed tables (the guest library allocates nothing of its own here).
#include "guest-stub/cuda/graph_host_steps.h"

#include "guest-stub/platform/api_lock.h"
#include "guest-stub/platform/platform.h"

namespace guest::cuda {

namespace {
constexpr int kMaxSteps = 256, kMaxStreams = 64, kMaxEvents = 256;
HostStep g_steps[kMaxSteps];
uint64_t g_seq;
// Live entries of each table: the common case (no graph host steps, no
// capture) costs every launch and copy one compare, not a scan.
unsigned g_live_steps, g_live_captures;
bool g_unrecorded_capture; // a capture began when g_streams was full
struct StreamCapture {
    CUstream stream;
    uint64_t id; // 0: free slot
    bool into_program_graph; // cuStreamBeginCaptureToGraph began it on this stream
};
StreamCapture g_streams[kMaxStreams];
struct EventCapture {
    CUevent event;
    uint64_t id;
};
EventCapture g_events[kMaxEvents];
} // namespace

HostStep* host_step_add(uint64_t owner, uint64_t node, CUhostFn fn, void* data)
{
    for (HostStep& s : g_steps)
        if (s.owner == 0) {
            s = HostStep{owner, node, fn, data, false, ++g_seq};
            ++g_live_steps;
            return &s;
        }
    return nullptr;
}

HostStep* host_step_of_node(uint64_t node)
{
    if (node == 0 || g_live_steps == 0)
        return nullptr;
    for (HostStep& s : g_steps)
        if (s.owner != 0 && s.node == node)
            return &s;
    return nullptr;
}

HostStep* host_step_in(uint64_t owner, uint64_t node)
{
    if (owner == 0 || node == 0)
        return nullptr;
    for (HostStep& s : g_steps)
        if (s.owner == owner && s.node == node)
            return &s;
    return nullptr;
}

bool host_steps_any(uint64_t owner)
{
    if (g_live_steps == 0)
        return false;
    for (const HostStep& s : g_steps)
        if (s.owner == owner)
            return true;
    return false;
}

bool host_steps_blocked(uint64_t owner)
{
    for (const HostStep& s : g_steps)
        if (s.owner == owner && s.device_after)
            return true;
    return false;
}

void host_steps_drop(uint64_t owner)
{
    for (HostStep& s : g_steps)
        if (s.owner == owner && owner != 0)
            s.owner = 0, --g_live_steps;
}

void host_step_drop_node(uint64_t node)
{
    if (HostStep* s = host_step_of_node(node))
        s->owner = 0, --g_live_steps;
}

bool host_steps_give(uint64_t from, uint64_t to, bool copy)
{
    for (HostStep& s : g_steps) {
        if (s.owner != from)
            continue;
        if (!copy) {
            s.owner = to;
            continue;
        }
        HostStep* c = host_step_add(to, s.node, s.fn, s.data);
        if (c == nullptr)
            return false;
        c->seq = s.seq;
    }
    return true;
}

bool host_steps_clone(uint64_t from, uint64_t to, uint64_t (*copy_of)(uint64_t clone, uint64_t node))
{
    for (HostStep& s : g_steps) {
        if (s.owner != from || from == 0)
            continue;
        const uint64_t node = s.node != 0 ? copy_of(to, s.node) : 0;
        if (s.node != 0 && node == 0)
            return false;
        HostStep* c = host_step_add(to, node, s.fn, s.data);
        if (c == nullptr)
            return false;
        c->seq = s.seq, c->device_after = s.device_after;
    }
    return true;
}

void host_steps_run(uint64_t owner)
{
    uint64_t last = 0;
    for (;;) { // the next step in order of addition (the table is small)
        const HostStep* next = nullptr;
        for (const HostStep& s : g_steps)
            if (s.owner == owner && s.seq > last && (next == nullptr || s.seq < next->seq))
                next = &s;
        if (next == nullptr)
            return;
        last = next->seq;
        const CUhostFn fn = next->fn;
        void* const data = next->data;
        const guest::platform::ApiUnlocked unlocked; // as a stream's host function (cuda_stream.cpp)
        fn(data);
    }
}

uint64_t capture_of(CUstream s)
{
    if (s == nullptr || g_live_captures == 0)
        return 0;
    for (const StreamCapture& c : g_streams)
        if (c.id != 0 && c.stream == s)
            return c.id;
    return 0;
}

bool capture_may_be_open() { return g_live_captures != 0 || g_unrecorded_capture; }

void capture_began(CUstream s, uint64_t id, bool into_program_graph)
{
    for (StreamCapture& c : g_streams)
        if (c.id == 0) {
            c = StreamCapture{s, id, into_program_graph};
            ++g_live_captures;
            return;
        }
    g_unrecorded_capture = true;
}

bool capture_into_program_graph(uint64_t id)
{
    for (const StreamCapture& c : g_streams)
        if (c.id == id && id != 0 && c.into_program_graph)
            return true;
    return false;
}

void capture_ended(uint64_t id)
{
    for (StreamCapture& c : g_streams)
        if (c.id == id && id != 0)
            c.id = 0, --g_live_captures;
    for (EventCapture& e : g_events)
        if (e.id == id)
            e.id = 0;
    host_steps_drop(capture_owner(id)); // what EndCapture did not give to the graph
}

void capture_event_recorded(CUevent e, CUstream s)
{
    if (g_live_captures == 0)
        return; // marks only matter while a capture is open (capture_ended clears its own)
    const uint64_t id = capture_of(s);
    EventCapture* free_slot = nullptr;
    for (EventCapture& ec : g_events) {
        if (ec.id != 0 && ec.event == e) {
            ec.id = id; // 0 when recorded outside a capture
            return;
        }
        if (ec.id == 0 && free_slot == nullptr)
            free_slot = &ec;
    }
    if (id != 0 && free_slot != nullptr)
        *free_slot = EventCapture{e, id};
}

void capture_stream_waits(CUstream s, CUevent e)
{
    if (s == nullptr || g_live_captures == 0 || capture_of(s) != 0)
        return;
    for (const EventCapture& ec : g_events)
        if (ec.id != 0 && ec.event == e) {
            capture_began(s, ec.id);
            return;
        }
}

void capture_stream_destroyed(CUstream s)
{
    for (StreamCapture& c : g_streams)
        if (c.id != 0 && c.stream == s)
            c.id = 0, --g_live_captures;
}

void capture_note_work(CUstream s)
{
    const uint64_t id = capture_of(s);
    if (id == 0)
        return;
    for (HostStep& st : g_steps)
        if (st.owner == capture_owner(id))
            st.device_after = true;
}

void host_step_order_refused(const char* what)
{
    static bool said;
    if (said)
        return;
    said = true;
    platform::printf("vgpu: %s: a guest host function runs after the graph's device work, so device work may not "
                     "depend on it (not offered)\n",
                     what);
}

} // namespace guest::cuda
