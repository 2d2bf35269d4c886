// One UCX connection and the worker that drives it, for the remote GPU:
// active messages (a small header and a body, each message kept whole until
// taken), sends that wait for their local completion, and bodies that land
// straight where their header says (guest RAM, or a server's copy of it). A UcxLink is used by one thread (its worker is
// made UCS_THREAD_MODE_SINGLE). Waits spin for a short window, then sleep on
// the worker's event descriptor.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/socket.h>

#include "kvmtool-gpu/remote/ucx_api.h"

namespace kvmgpu::remote {

// The process's UCP context (active messages, RMA, wake-ups); nullptr with
// *why when UCX is missing or refuses to start.
class UcxContext {
public:
    static std::shared_ptr<UcxContext> create(std::string* why);
    ~UcxContext();
    ucp_context_h handle() const { return ctx_; }
    const UcxApi& api() const { return *api_; }

private:
    UcxContext(const UcxApi* api, ucp_context_h ctx) : api_(api), ctx_(ctx) {}
    const UcxApi* api_;
    ucp_context_h ctx_;
};

// A worker of its own (each link, and the listener, progress theirs).
class UcxWorker {
public:
    static std::unique_ptr<UcxWorker> create(std::shared_ptr<UcxContext> ctx, std::string* why);
    ~UcxWorker();
    ucp_worker_h handle() const { return worker_; }
    const UcxApi& api() const { return ctx_->api(); }
    UcxContext& context() const { return *ctx_; }
    // Progresses until `done()` or the deadline: spins for the first
    // `spin`, then sleeps on the event descriptor between progress calls.
    bool wait(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline,
              std::chrono::microseconds spin = std::chrono::microseconds(50));

private:
    UcxWorker(std::shared_ptr<UcxContext> ctx, ucp_worker_h w, int efd) : ctx_(std::move(ctx)), worker_(w), efd_(efd) {}
    bool sleep_until(std::chrono::steady_clock::time_point deadline);
    std::shared_ptr<UcxContext> ctx_;
    ucp_worker_h worker_;
    int efd_;
};

struct UcxMessage {
    uint16_t id = 0;
    std::vector<uint8_t> header;
    std::vector<uint8_t> body;
    bool complete = true; // false while a rendezvous body is still arriving
    bool landed = false;  // the body went where the landing asked (body is empty)
    bool refused = false; // the landing refused the header: the body was dropped
};

// Where the body of a message of some id goes, from its header: nullptr
// refuses it (the message is kept, marked refused, without its body).
using Landing = std::function<uint8_t*(const std::vector<uint8_t>& header, size_t body_bytes)>;

class UcxLink {
public:
    // Messages of ids [0, kMaxIds) are received (and queued) from the start.
    static constexpr unsigned kMaxIds = 13;
    // Messages waiting to be taken, at most: the protocol never has more
    // than a batch and its guest RAM pieces in flight, so a peer that sends
    // more is flooding, and the link is dropped rather than its memory grown.
    static constexpr size_t kMaxInbox = 4096;

    // "HOST:PORT" ("[V6ADDR]:PORT" too); the connection itself completes in
    // the background, and its failure shows at the first send or receive.
    static std::unique_ptr<UcxLink> connect(std::shared_ptr<UcxContext> ctx, const std::string& address, std::string* why);
    // The server's end of a connection request the listener took.
    static std::unique_ptr<UcxLink> accept(std::shared_ptr<UcxContext> ctx, ucp_conn_request_h request, std::string* why);
    ~UcxLink();
    UcxLink(const UcxLink&) = delete;
    UcxLink& operator=(const UcxLink&) = delete;

    // False when the peer is gone (or the deadline passed: *why says which).
    bool send(uint16_t id, const void* header, size_t header_bytes, const void* body, size_t body_bytes,
              std::chrono::milliseconds timeout = std::chrono::seconds(30), std::string* why = nullptr);
    // Waits for the next whole message of `id`; false on timeout or a lost peer.
    bool receive(uint16_t id, UcxMessage* out, std::chrono::steady_clock::time_point deadline);
    // The oldest whole message, whatever its id.
    bool receive_any(UcxMessage* out, std::chrono::steady_clock::time_point deadline);
    // Runs the worker once.
    void progress();
    // After a last message the peer must read (a refusal, the answer to its
    // stop): the peer closes once it has it; this link's own close is forced.
    void wait_for_peer_to_leave(std::chrono::milliseconds most);
    bool peer_lost() const { return peer_lost_; }
    const std::string& peer_error() const { return peer_error_; }

    // Bodies of messages of `id` land where `landing` says.
    void set_landing(uint16_t id, Landing landing) { landings_[id] = std::move(landing); }

private:
    explicit UcxLink(std::unique_ptr<UcxWorker> worker);
    // A worker of its own, the handlers, and the endpoint `p` asks for (the
    // peer-failure handler added).
    static std::unique_ptr<UcxLink> open(std::shared_ptr<UcxContext> ctx, ucp_ep_params_t p, const std::string& what,
                                         std::string* why);
    bool install_handlers(std::string* why);
    bool take(int id, UcxMessage* out, std::chrono::steady_clock::time_point deadline); // id < 0: any
    bool finish(ucs_status_ptr_t request, std::chrono::steady_clock::time_point deadline, std::string* why);
    static ucs_status_t on_message(void* arg, const void* header, size_t header_bytes, void* body, size_t body_bytes,
                                   const ucp_am_recv_param_t* param);
    static void on_error(void* arg, ucp_ep_h ep, ucs_status_t status);

    std::unique_ptr<UcxWorker> worker_;
    ucp_ep_h ep_ = nullptr;
    bool peer_lost_ = false;
    std::string peer_error_;
    std::deque<std::unique_ptr<UcxMessage>> inbox_;
    struct HandlerArg {
        UcxLink* link;
        uint16_t id;
    };
    HandlerArg handler_args_[kMaxIds];
    Landing landings_[kMaxIds];
};

// The server's listening socket: connection requests queue up until taken.
class UcxListener {
public:
    // "HOST:PORT" or ":PORT" (every address); port 0 picks a free one.
    static std::unique_ptr<UcxListener> listen(std::shared_ptr<UcxContext> ctx, const std::string& address, std::string* why);
    ~UcxListener();
    uint16_t port() const { return port_; }
    // The next request, or nullptr at the deadline.
    ucp_conn_request_h take(std::chrono::steady_clock::time_point deadline);
    // Refuses a request without a session (the server is full).
    void reject(ucp_conn_request_h request);

private:
    explicit UcxListener(std::unique_ptr<UcxWorker> worker) : worker_(std::move(worker)) {}
    static void on_request(ucp_conn_request_h request, void* arg);
    std::unique_ptr<UcxWorker> worker_;
    ucp_listener_h listener_ = nullptr;
    uint16_t port_ = 0;
    std::deque<ucp_conn_request_h> requests_;
};

// Parses "HOST:PORT", "[V6]:PORT" or ":PORT" into a socket address; false with *why.
bool parse_socket_address(const std::string& address, struct sockaddr_storage* out, socklen_t* len, std::string* why);

} // namespace kvmgpu::remote
