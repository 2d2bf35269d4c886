#include "kvmtool-gpu/remote/ucx_link.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>

#include <cstring>

namespace kvmgpu::remote {

namespace {

using Clock = std::chrono::steady_clock;

std::string ucx_error(const UcxApi& api, const char* what, ucs_status_t s) {
    return std::string(what) + ": " + api.ucs_status_string(s);
}

} // namespace

// ---- context and worker ----------------------------------------------------

std::shared_ptr<UcxContext> UcxContext::create(std::string* why) {
    const UcxApi* api = ucx_api(why);
    if (!api) return nullptr;
    ucp_config_t* config = nullptr;
    ucs_status_t s = api->ucp_config_read(nullptr, nullptr, &config);
    if (s != UCS_OK) {
        *why = ucx_error(*api, "UCX configuration", s);
        return nullptr;
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 1; // each session's thread makes its worker on the server's one context
    ucp_context_h ctx = nullptr;
    s = api->ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &ctx);
    api->ucp_config_release(config);
    if (s != UCS_OK) {
        *why = ucx_error(*api, "UCX initialisation", s);
        return nullptr;
    }
    return std::shared_ptr<UcxContext>(new UcxContext(api, ctx));
}

UcxContext::~UcxContext() { api_->ucp_cleanup(ctx_); }

std::unique_ptr<UcxWorker> UcxWorker::create(std::shared_ptr<UcxContext> ctx, std::string* why) {
    const UcxApi& api = ctx->api();
    ucp_worker_params_t params{};
    params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    params.thread_mode = UCS_THREAD_MODE_SINGLE;
    ucp_worker_h w = nullptr;
    ucs_status_t s = api.ucp_worker_create(ctx->handle(), &params, &w);
    if (s != UCS_OK) {
        *why = ucx_error(api, "UCX worker", s);
        return nullptr;
    }
    int efd = -1;
    s = api.ucp_worker_get_efd(w, &efd);
    if (s != UCS_OK) {
        api.ucp_worker_destroy(w);
        *why = ucx_error(api, "UCX worker event descriptor", s);
        return nullptr;
    }
    return std::unique_ptr<UcxWorker>(new UcxWorker(std::move(ctx), w, efd));
}

UcxWorker::~UcxWorker() { api().ucp_worker_destroy(worker_); }

bool UcxWorker::sleep_until(Clock::time_point deadline) {
    // Arm, and sleep only when nothing arrived in between (UCS_ERR_BUSY).
    if (api().ucp_worker_arm(worker_) != UCS_OK) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{efd_, POLLIN, 0};
    // At most 100 ms a sleep: a caller's own conditions (a stop flag) are
    // looked at again then.
    return poll(&p, 1, static_cast<int>(std::clamp<long long>(left + 1, 0, 100))) >= 0;
}

bool UcxWorker::wait(const std::function<bool()>& done, Clock::time_point deadline, std::chrono::microseconds spin) {
    const auto spin_until = Clock::now() + spin;
    for (;;) {
        while (api().ucp_worker_progress(worker_) != 0) {
        }
        if (done()) return true;
        const auto now = Clock::now();
        if (now >= deadline) return false;
        if (now >= spin_until) sleep_until(deadline);
    }
}

// ---- addresses -------------------------------------------------------------

bool parse_socket_address(const std::string& address, sockaddr_storage* out, socklen_t* len, std::string* why) {
    std::string host, port;
    if (!address.empty() && address[0] == '[') {
        const size_t close = address.find(']');
        if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
            *why = "address '" + address + "': expected [IPV6]:PORT";
            return false;
        }
        host = address.substr(1, close - 1);
        port = address.substr(close + 2);
    } else {
        const size_t colon = address.rfind(':');
        if (colon == std::string::npos) {
            *why = "address '" + address + "': expected HOST:PORT";
            return false;
        }
        host = address.substr(0, colon);
        port = address.substr(colon + 1);
    }
    char* end = nullptr;
    const unsigned long p = std::strtoul(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p > 65535) {
        *why = "address '" + address + "': port must be a number from 0 to 65535";
        return false;
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = host.empty() ? AI_PASSIVE : 0;
    addrinfo* res = nullptr;
    const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0 || !res) {
        *why = "address '" + address + "': " + gai_strerror(rc);
        return false;
    }
    std::memcpy(out, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return true;
}

// ---- the link --------------------------------------------------------------

UcxLink::UcxLink(std::unique_ptr<UcxWorker> worker) : worker_(std::move(worker)) {}

UcxLink::~UcxLink() {
    if (ep_) {
        // Forced: a graceful close waits for the peer to flush, and UCX aborts
        // if a worker goes with that still pending (a peer that never took
        // the connection, or stopped answering). The protocol makes sure
        // each side's last message was taken before the link goes
        // (wait_for_peer_to_leave).
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_EP_CLOSE_FLAG_FORCE;
        std::string ignored;
        finish(worker_->api().ucp_ep_close_nbx(ep_, &p), Clock::now() + std::chrono::seconds(1), &ignored);
    }
    for (uint16_t id = 0; id < kMaxIds; ++id) {
        ucp_am_handler_param_t h{};
        h.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
        h.id = id;
        h.cb = nullptr;
        worker_->api().ucp_worker_set_am_recv_handler(worker_->handle(), &h);
    }
}

void UcxLink::wait_for_peer_to_leave(std::chrono::milliseconds most) {
    worker_->wait([&] { return peer_lost_; }, Clock::now() + most);
}

bool UcxLink::install_handlers(std::string* why) {
    for (uint16_t id = 0; id < kMaxIds; ++id) {
        handler_args_[id] = HandlerArg{this, id};
        ucp_am_handler_param_t h{};
        h.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                       UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
        h.flags = UCP_AM_FLAG_WHOLE_MSG; // an eager message of many fragments arrives whole
        h.id = id;
        h.cb = &UcxLink::on_message;
        h.arg = &handler_args_[id];
        const ucs_status_t s = worker_->api().ucp_worker_set_am_recv_handler(worker_->handle(), &h);
        if (s != UCS_OK) {
            *why = ucx_error(worker_->api(), "UCX message handler", s);
            return false;
        }
    }
    return true;
}

void UcxLink::on_error(void* arg, ucp_ep_h, ucs_status_t status) {
    auto* link = static_cast<UcxLink*>(arg);
    link->peer_lost_ = true;
    link->peer_error_ = ucx_error(link->worker_->api(), "connection lost", status);
}

std::unique_ptr<UcxLink> UcxLink::open(std::shared_ptr<UcxContext> ctx, ucp_ep_params_t p, const std::string& what,
                                       std::string* why) {
    auto worker = UcxWorker::create(std::move(ctx), why);
    if (!worker) return nullptr;
    std::unique_ptr<UcxLink> link(new UcxLink(std::move(worker)));
    if (!link->install_handlers(why)) return nullptr;
    p.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    p.err_handler.cb = &UcxLink::on_error;
    p.err_handler.arg = link.get();
    const ucs_status_t s = link->worker_->api().ucp_ep_create(link->worker_->handle(), &p, &link->ep_);
    if (s != UCS_OK) {
        link->ep_ = nullptr;
        *why = ucx_error(link->worker_->api(), what.c_str(), s);
        return nullptr;
    }
    return link;
}

std::unique_ptr<UcxLink> UcxLink::connect(std::shared_ptr<UcxContext> ctx, const std::string& address, std::string* why) {
    sockaddr_storage sa{};
    socklen_t sa_len = 0;
    if (!parse_socket_address(address, &sa, &sa_len, why)) return nullptr;
    ucp_ep_params_t p{};
    p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
    p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&sa);
    p.sockaddr.addrlen = sa_len;
    return open(std::move(ctx), p, "connecting to " + address, why);
}

std::unique_ptr<UcxLink> UcxLink::accept(std::shared_ptr<UcxContext> ctx, ucp_conn_request_h request, std::string* why) {
    ucp_ep_params_t p{};
    p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
    p.conn_request = request;
    return open(std::move(ctx), p, "accepting a connection", why);
}

ucs_status_t UcxLink::on_message(void* arg, const void* header, size_t header_bytes, void* body, size_t body_bytes,
                                 const ucp_am_recv_param_t* param) {
    auto* h = static_cast<HandlerArg*>(arg);
    UcxLink& link = *h->link;
    if (link.inbox_.size() >= kMaxInbox) {
        link.peer_lost_ = true;
        link.peer_error_ = "the peer sent more than " + std::to_string(kMaxInbox) + " messages unanswered";
        return UCS_OK; // dropped (a rendezvous body unread)
    }
    auto msg = std::make_unique<UcxMessage>();
    msg->id = h->id;
    msg->header.assign(static_cast<const uint8_t*>(header), static_cast<const uint8_t*>(header) + header_bytes);
    uint8_t* dst = nullptr;
    if (link.landings_[h->id] && body_bytes > 0) {
        dst = link.landings_[h->id](msg->header, body_bytes);
        if (!dst) {
            // Dropped: returning UCS_OK without receiving releases it.
            msg->refused = true;
            link.inbox_.push_back(std::move(msg));
            return UCS_OK;
        }
        msg->landed = true;
    } else {
        msg->body.resize(body_bytes);
        dst = msg->body.data();
    }
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        if (body_bytes) std::memcpy(dst, body, body_bytes);
        link.inbox_.push_back(std::move(msg));
        return UCS_OK;
    }
    // A large body arrives by rendezvous: the message waits in the inbox,
    // incomplete, until its data has landed.
    UcxMessage* m = msg.get();
    link.inbox_.push_back(std::move(msg));
    m->complete = false;
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    // The request is freed when it completes (freed earlier, no callback would come).
    p.cb.recv_am = [](void* request, ucs_status_t, size_t, void* user) {
        static_cast<UcxMessage*>(user)->complete = true;
        ucx_api(nullptr)->ucp_request_free(request);
    };
    p.user_data = m;
    ucs_status_ptr_t req = link.worker_->api().ucp_am_recv_data_nbx(link.worker_->handle(), body, dst, body_bytes, &p);
    if (req == nullptr) {
        m->complete = true;
    } else if (UCS_PTR_IS_ERR(req)) {
        link.peer_lost_ = true;
        link.peer_error_ = ucx_error(link.worker_->api(), "receiving a message body", UCS_PTR_STATUS(req));
    }
    return UCS_OK;
}

void UcxLink::progress() {
    while (worker_->api().ucp_worker_progress(worker_->handle()) != 0) {
    }
}

bool UcxLink::finish(ucs_status_ptr_t req, Clock::time_point deadline, std::string* why) {
    const UcxApi& api = worker_->api();
    if (req == nullptr) return true;
    if (UCS_PTR_IS_ERR(req)) {
        *why = ucx_error(api, "UCX operation", UCS_PTR_STATUS(req));
        return false;
    }
    ucs_status_t s = UCS_INPROGRESS;
    const bool finished = worker_->wait([&] { return (s = api.ucp_request_check_status(req)) != UCS_INPROGRESS; },
                                        deadline);
    if (!finished) {
        api.ucp_request_free(req); // UCX finishes (or fails) it on its own
        *why = "the peer did not answer in time";
        peer_lost_ = true;
        peer_error_ = *why;
        return false;
    }
    api.ucp_request_free(req);
    if (s != UCS_OK) {
        *why = ucx_error(api, "UCX operation", s);
        return false;
    }
    return true;
}

bool UcxLink::send(uint16_t id, const void* header, size_t header_bytes, const void* body, size_t body_bytes,
                   std::chrono::milliseconds timeout, std::string* why) {
    std::string local_why;
    if (!why) why = &local_why;
    if (peer_lost_) {
        *why = peer_error_;
        return false;
    }
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    // Eager only: the rendezvous protocol over TCP between two network
    // namespaces of one host never completed on the H100 machine (UCX 1.13),
    // where the same bodies landed on a loopback.
    p.flags = UCP_AM_SEND_FLAG_EAGER; // no REPLY: each side answers on its own endpoint
    ucs_status_ptr_t req = worker_->api().ucp_am_send_nbx(ep_, id, header, header_bytes, body, body_bytes, &p);
    return finish(req, Clock::now() + timeout, why) && !peer_lost_;
}

bool UcxLink::receive_any(UcxMessage* out, Clock::time_point deadline) { return take(-1, out, deadline); }

bool UcxLink::receive(uint16_t id, UcxMessage* out, Clock::time_point deadline) { return take(id, out, deadline); }

bool UcxLink::take(int id, UcxMessage* out, Clock::time_point deadline) {
    auto find = [&]() -> bool {
        for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
            if (id >= 0 && (*it)->id != id) continue;
            if (!(*it)->complete) {
                if (id < 0) return false; // in order: the oldest must land first
                continue;
            }
            *out = std::move(**it);
            inbox_.erase(it);
            return true;
        }
        return false;
    };
    bool found = false;
    worker_->wait([&] { return (found = find()) || peer_lost_; }, deadline);
    return found;
}

// ---- listener --------------------------------------------------------------

void UcxListener::on_request(ucp_conn_request_h request, void* arg) {
    static_cast<UcxListener*>(arg)->requests_.push_back(request);
}

std::unique_ptr<UcxListener> UcxListener::listen(std::shared_ptr<UcxContext> ctx, const std::string& address, std::string* why) {
    sockaddr_storage sa{};
    socklen_t sa_len = 0;
    if (!parse_socket_address(address, &sa, &sa_len, why)) return nullptr;
    auto worker = UcxWorker::create(std::move(ctx), why);
    if (!worker) return nullptr;
    std::unique_ptr<UcxListener> l(new UcxListener(std::move(worker)));
    const UcxApi& api = l->worker_->api();
    ucp_listener_params_t p{};
    p.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&sa);
    p.sockaddr.addrlen = sa_len;
    p.conn_handler.cb = &UcxListener::on_request;
    p.conn_handler.arg = l.get();
    ucs_status_t s = api.ucp_listener_create(l->worker_->handle(), &p, &l->listener_);
    if (s != UCS_OK) {
        l->listener_ = nullptr;
        *why = ucx_error(api, ("listening on " + address).c_str(), s);
        return nullptr;
    }
    ucp_listener_attr_t attr{};
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    if (api.ucp_listener_query(l->listener_, &attr) == UCS_OK) {
        if (attr.sockaddr.ss_family == AF_INET)
            l->port_ = ntohs(reinterpret_cast<const sockaddr_in*>(&attr.sockaddr)->sin_port);
        else if (attr.sockaddr.ss_family == AF_INET6)
            l->port_ = ntohs(reinterpret_cast<const sockaddr_in6*>(&attr.sockaddr)->sin6_port);
    }
    return l;
}

UcxListener::~UcxListener() {
    for (ucp_conn_request_h r : requests_) worker_->api().ucp_listener_reject(listener_, r);
    if (listener_) worker_->api().ucp_listener_destroy(listener_);
}

ucp_conn_request_h UcxListener::take(Clock::time_point deadline) {
    worker_->wait([&] { return !requests_.empty(); }, deadline);
    if (requests_.empty()) return nullptr;
    ucp_conn_request_h r = requests_.front();
    requests_.pop_front();
    return r;
}

void UcxListener::reject(ucp_conn_request_h request) { worker_->api().ucp_listener_reject(listener_, request); }

} // namespace kvmgpu::remote
