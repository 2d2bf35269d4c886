#include "kvmtool-gpu/remote/remote_engine.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_abi_layout.h"
#include "kvmtool-gpu/remote/remote_wire.h"
#include "kvmtool-gpu/remote/guest_ram_copy.h"
#include "kvmtool-gpu/remote/span_list.h"
#include "kvmtool-gpu/remote/ucx_link.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::remote {

namespace {


// address ("HOST:PORT") with another port.
std::string with_port(const std::string& address, uint32_t port) {
    return address.substr(0, address.rfind(':') + 1) + std::to_string(port);
}

std::string body_text(const UcxMessage& m) {
    std::string s(m.body.begin(), m.body.begin() + std::min<size_t>(m.body.size(), 512));
    for (char& ch : s)
        if (ch < 0x20 || ch > 0x7e) ch = '?';
    return s;
}

class RemoteEngine final : public vgpu::CommandEngine, public vgpu::CommandSink {
public:
    RemoteEngine(const memmap::GuestMemory& mem, const vgpu::VgpuOptions& opts, std::string address)
        : CommandEngine(opts, nullptr), mem_(mem), address_(std::move(address)) {}

    bool connect(const SharedKey& key, std::string* why);

    uint32_t backend_id() const override { return backend_id_; }
    vgpu::EngineStart start() override { return start_; }
    vgpu::CommandSink* sink() override { return this; }
    vgpu::CommandResult execute(vgpu::GuestCommand& cmd) override;
    uint32_t batch_limit() const override { return kMaxBatch; }
    void execute_batch(std::span<vgpu::GuestCommand> cmds, std::span<vgpu::CommandResult> out) override;
    void reset() override { control(ControlOp::Reset); }
    void stop() override { control(ControlOp::Stop); }
    // A server that keeps its connection but does not answer: the wait ends,
    // the command fails as with a lost GPU, and so does every later one (its
    // answer may still come, out of step).
    void cancel_call_in_flight() override { cancel_.store(true, std::memory_order_release); }
    void vm_stopping() override {
        const auto at = Clock::now() + kStopGrace;
        stop_by_ns_.store(at.time_since_epoch().count(), std::memory_order_release);
    }

private:
    bool open_link(const std::string& address, std::string* why);
    // True once WELCOMEd, or with *redirect set to the port of the session's own process.
    bool handshake(const SharedKey& key, uint32_t* redirect, std::string* why);
    void serve_fetch(const UcxMessage& m);
    void serve_fetch_list(const UcxMessage& m);
    void control(ControlOp op);
    vgpu::CommandResult lost();

    const memmap::GuestMemory& mem_;
    std::string address_;
    std::unique_ptr<UcxLink> link_;
    uint32_t backend_id_ = 0;
    vgpu::EngineStart start_;
    uint64_t seq_ = 0;
    bool stopped_ = false;
    std::atomic<bool> cancel_{false};
    // Set when the VM is going away: a call the server still holds then is
    // given up (the command in hand may finish; a silent server must not
    // hold the VM's teardown). 0: not stopping.
    static constexpr std::chrono::seconds kStopGrace{2};
    std::atomic<Clock::rep> stop_by_ns_{0};
    bool past_stop_grace() const {
        const Clock::rep by = stop_by_ns_.load(std::memory_order_acquire);
        return by != 0 && Clock::now().time_since_epoch().count() > by;
    }
    std::vector<uint8_t> body_;       // a batch being sent
    std::vector<uint8_t> fetch_body_; // a DATA_LIST being sent
};

bool RemoteEngine::open_link(const std::string& address, std::string* why) {
    auto ctx = UcxContext::create(why); // the link's worker keeps it
    if (!ctx) return false;
    link_ = UcxLink::connect(std::move(ctx), address, why);
    if (!link_) return false;
    link_->set_landing(kData, data_landing(mem_)); // what the server's commands wrote
    return true;
}

// The server proves the key and sends the VMM on to its session's process,
// where both prove it again (that process holds the key too).
bool RemoteEngine::connect(const SharedKey& key, std::string* why) {
    if (mem_.regions().size() > kMaxRemoteRegions) {
        *why = "guest RAM has more regions than a GPU server takes";
        return false;
    }
    uint32_t redirect = 0;
    if (open_link(address_, why) && handshake(key, &redirect, why)) {
        if (redirect == 0) return true;
        link_.reset();
        const std::string server = address_;
        address_ = with_port(server, redirect);
        if (open_link(address_, why) && handshake(key, &redirect, why)) {
            if (redirect == 0) return true;
            *why = "GPU server at " + server + " sent the VMM on twice";
        }
    }
    link_.reset();
    return false;
}

bool RemoteEngine::handshake(const SharedKey& key, uint32_t* redirect, std::string* why) {
    *redirect = 0;
    const auto deadline = Clock::now() + kHandshakeTimeout;
    WireHello hello{kWireMagic, kWireVersion, VGPU_ABI_VERSION, 0, VGPU_ABI_LAYOUT_HASH, fresh_nonce()};
    if (!link_->send(kHello, &hello, sizeof hello, nullptr, 0, kHandshakeTimeout, why)) {
        *why = "no GPU server answers at " + address_ + " (" + *why + ")";
        return false;
    }
    UcxMessage m;
    WireChallenge challenge{};
    if (!link_->receive(kChallenge, &m, deadline) || !header_as(m, &challenge) || challenge.magic != kWireMagic) {
        *why = "no GPU server answers at " + address_ + (link_->peer_lost() ? " (" + link_->peer_error() + ")" : "");
        return false;
    }
    if (challenge.status != 0) {
        *why = "GPU server at " + address_ + " refused: " + body_text(m);
        return false;
    }
    // The server proves the key before it learns anything about guest RAM.
    if (!same_digest(challenge.server_proof, key_proof(key, "server", hello.client_nonce, challenge.server_nonce))) {
        *why = "GPU server at " + address_ + " does not hold our key: not connecting";
        return false;
    }
    WireProof proof{key_proof(key, "client", challenge.server_nonce, hello.client_nonce),
                    static_cast<uint32_t>(mem_.regions().size()), 0};
    std::vector<uint8_t> body;
    for (const memmap::Region& r : mem_.regions()) put_struct(&body, WireRegion{r.base.value, r.size()});
    if (!link_->send(kProof, &proof, sizeof proof, body.data(), body.size(), kHandshakeTimeout, why)) return false;
    WireWelcome welcome{};
    WireRedirect to{};
    const bool answered = link_->receive_any(&m, deadline);
    if (answered && m.id == kRedirect && header_as(m, &to) && to.port != 0 && to.port <= 65535) {
        *redirect = to.port;
        return true;
    }
    if (!answered || m.id != kWelcome || !header_as(m, &welcome)) {
        *why = "GPU server at " + address_ + " did not finish the handshake" +
               (link_->peer_lost() ? " (" + link_->peer_error() + ")" : "");
        return false;
    }
    if (welcome.status != 0) {
        *why = "GPU server at " + address_ + " refused: " + body_text(m);
        return false;
    }
    backend_id_ = welcome.backend_id;
    start_.description = body_text(m) + " on the GPU server at " + address_;
    start_.features = welcome.features;
    start_.registration = static_cast<vgpu_status>(welcome.registration);
    start_.registration_ns = welcome.registration_ns;
    return true;
}

vgpu::CommandResult RemoteEngine::lost() {
    vgpu::CommandResult r;
    r.status = VGPU_ERROR_NO_DEVICE;
    return r;
}

vgpu::CommandResult RemoteEngine::execute(vgpu::GuestCommand& cmd) {
    vgpu::CommandResult r;
    execute_batch({&cmd, 1}, {&r, 1});
    return r;
}

void RemoteEngine::execute_batch(std::span<vgpu::GuestCommand> cmds, std::span<vgpu::CommandResult> out) {
    const vgpu::CommandResult gone = lost();
    std::fill(out.begin(), out.end(), gone);
    if (stopped_ || cancel_.load(std::memory_order_acquire) || link_->peer_lost()) return;
    const WireBatch head{++seq_, static_cast<uint32_t>(cmds.size()), 0};
    body_.clear();
    for (const vgpu::GuestCommand& c : cmds) {
        const WireCommand w{c.desc, c.slot, std::min<uint32_t>(c.desc.payload_len, VGPU_PAYLOAD_BYTES)};
        put_struct(&body_, w);
        body_.insert(body_.end(), c.payload.data(), c.payload.data() + w.payload_bytes);
    }
    std::string why;
    if (!link_->send(kCommands, &head, sizeof head, body_.data(), body_.size(), std::chrono::seconds(30), &why)) {
        log_warn("vgpu: remote GPU at %s: %s", address_.c_str(), why.c_str());
        return;
    }
    // Commands may run long (a kernel, a synchronize): wait while the
    // server is there, serving the guest RAM they read and write.
    UcxMessage m;
    for (;;) {
        if (cancel_.load(std::memory_order_acquire) || past_stop_grace()) {
            log_warn("vgpu: remote GPU at %s: a call was %s while the server held it; the vGPU is lost",
                     address_.c_str(), past_stop_grace() ? "given up as the VM stopped" : "cancelled");
            cancel_.store(true, std::memory_order_release);
            return;
        }
        if (!link_->receive_any(&m, Clock::now() + std::chrono::milliseconds(100))) {
            if (!link_->peer_lost()) continue;
            log_warn("vgpu: remote GPU at %s: %s", address_.c_str(), link_->peer_error().c_str());
            return;
        }
        if (m.id == kResults) break;
        if (m.id == kFetch) {
            serve_fetch(m);
        } else if (m.id == kFetchList) {
            serve_fetch_list(m);
        } else if (m.id == kDataList) {
            std::vector<WireSpan> spans;
            if (!parse_span_list(m, true, &spans) || !scatter_span_list(mem_, spans, m.body)) {
                log_warn("vgpu: remote GPU at %s broke the protocol (a span list outside guest RAM?)", address_.c_str());
                return;
            }
        } else if (m.id != kData || m.refused) {
            log_warn("vgpu: remote GPU at %s broke the protocol (message %u, outside guest RAM?)", address_.c_str(), m.id);
            return;
        }
    }
    WireBatch back{};
    if (!header_as(m, &back) || back.seq != head.seq || back.count != cmds.size()) {
        log_warn("vgpu: remote GPU at %s answered out of order", address_.c_str());
        return;
    }
    size_t at = 0;
    vgpu::VgpuCounters::add(counters().commands, cmds.size()); // as the server counted them: errors below
    for (size_t i = 0; i < cmds.size(); ++i) {
        WireResult res{};
        if (!take_struct(m.body, &at, &res)) break;
        vgpu::CommandResult& r = out[i];
        r.status = res.status;
        r.result[0] = res.result[0];
        r.result[1] = res.result[1];
        r.write_payload = false;
        if (r.status != VGPU_SUCCESS && r.status != VGPU_ERROR_NOT_READY) vgpu::VgpuCounters::add(counters().errors);
        if (res.write_payload) {
            if (m.body.size() - at < VGPU_PAYLOAD_BYTES) {
                r = gone;
                break;
            }
            std::memcpy(cmds[i].payload.data(), m.body.data() + at, VGPU_PAYLOAD_BYTES);
            at += VGPU_PAYLOAD_BYTES;
            r.write_payload = true;
        }
    }
}

void RemoteEngine::serve_fetch(const UcxMessage& m) {
    // The server names the span; it is answered only inside guest RAM.
    WireSpan span{};
    const uint8_t* bytes = nullptr;
    if (header_as(m, &span))
        if (auto view = mem_.translate(memmap::GuestPhysAddr{span.gpa}, span.bytes)) bytes = view->data();
    if (!bytes) span.bytes = 0; // an empty answer: the server's command fails
    link_->send(kData, &span, sizeof span, bytes, span.bytes);
}

void RemoteEngine::serve_fetch_list(const UcxMessage& m) {
    // Answered only inside guest RAM: a list that names anything else, or
    // breaks the limits, gets an empty answer and the server's command fails.
    std::vector<WireSpan> spans;
    if (!parse_span_list(m, false, &spans) || !gather_span_list(mem_, spans, &fetch_body_)) {
        const WireSpanList none{0, 0};
        link_->send(kDataList, &none, sizeof none, nullptr, 0);
        return;
    }
    const WireSpanList head{static_cast<uint32_t>(spans.size()), 0};
    link_->send(kDataList, &head, sizeof head, fetch_body_.data(), fetch_body_.size());
}

void RemoteEngine::control(ControlOp op) {
    if (stopped_ || cancel_.load(std::memory_order_acquire) || !link_ || link_->peer_lost()) return;
    const WireControl c{static_cast<uint32_t>(op), 0};
    std::string why;
    UcxMessage m;
    if (!link_->send(kControl, &c, sizeof c, nullptr, 0, std::chrono::seconds(30), &why) ||
        !link_->receive(kControlDone, &m, Clock::now() + std::chrono::seconds(60)))
        log_warn("vgpu: remote GPU at %s did not confirm %s", address_.c_str(), op == ControlOp::Reset ? "RESET" : "stop");
    if (op == ControlOp::Stop) stopped_ = true;
}

} // namespace

std::unique_ptr<vgpu::CommandEngine> make_remote_engine(const memmap::GuestMemory& mem, const vgpu::VgpuOptions& opts,
                                                        const RemoteTarget& target, std::string* why) {
    auto e = std::make_unique<RemoteEngine>(mem, opts, target.address);
    if (!e->connect(target.key, why)) return nullptr;
    return e;
}

} // namespace kvmgpu::remote
