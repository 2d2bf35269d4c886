#include "kvmtool-gpu/remote/server_session.h"

#include <cstring>
#include <string>

#include "kvmtool-gpu/abi/vgpu_abi_layout.h"
#include "kvmtool-gpu/devices/vgpu/inline_engine.h"
#include "kvmtool-gpu/remote/guest_ram_copy.h"
#include "kvmtool-gpu/remote/remote_wire.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::remote {

namespace {

// A refusal in the message the VMM waits for (its status set), the reason
// as its body; the VMM reads it before the link goes.
template <typename Header>
bool refuse(UcxLink& link, GpuServerStats& stats, WireId id, Header header, const std::string& why) {
    header.status = 1;
    link.send(id, &header, sizeof header, why.data(), why.size(), std::chrono::seconds(2));
    link.wait_for_peer_to_leave(std::chrono::seconds(2));
    ++stats.refused;
    log_warn("gpu-server: refused a VMM: %s", why.c_str());
    return false;
}

bool refuse_challenge(UcxLink& link, GpuServerStats& stats, const std::string& why) {
    return refuse(link, stats, kChallenge, WireChallenge{.magic = kWireMagic}, why);
}

} // namespace

bool refuse_welcome(UcxLink& link, GpuServerStats& stats, const std::string& why) {
    return refuse(link, stats, kWelcome, WireWelcome{}, why);
}

namespace {

class Session {
public:
    Session(UcxLink& link, const GpuServerOptions& opts, GpuServerStats& stats) : link_(link), opts_(opts), stats_(stats) {}
    // False (logged) when the VMM is refused.
    bool handshake();
    void serve(const std::atomic<bool>& stop);

private:
    bool refuse_welcome(const std::string& why) { return remote::refuse_welcome(link_, stats_, why); }
    bool run_commands(const UcxMessage& m);
    bool run_control(const UcxMessage& m, bool* stopped);

    UcxLink& link_;
    const GpuServerOptions& opts_;
    GpuServerStats& stats_;
    std::unique_ptr<GuestRamCopy> ram_;
    std::unique_ptr<vgpu::InlineEngine> engine_;
    vgpu::GuestCommand cmd_{};
    std::vector<uint8_t> results_; // a batch's answers
};

bool Session::handshake() {
    UcxMessage m;
    if (!prove_key(link_, opts_, stats_, &m)) return false;
    WireProof proof{};
    header_as(m, &proof); // prove_key checked it
    std::string why;
    ram_ = GuestRamCopy::create(link_, proof.regions, m.body, opts_.max_guest_ram, &why);
    if (!ram_) return refuse_welcome("guest RAM: " + why);
    vgpu::DeviceBackends backends = vgpu::make_backend(opts_.backend, &why, opts_.gpus);
    if (!backends) return refuse_welcome("no backend: " + why);
    try {
        engine_ = std::make_unique<vgpu::InlineEngine>(ram_->memory(), std::move(backends), opts_.vgpu);
    } catch (const std::exception& e) {
        return refuse_welcome(std::string("engine: ") + e.what());
    }
    engine_->use_remote_ram(ram_.get());
    const vgpu::EngineStart st = engine_->start();
    WireWelcome w{};
    w.backend_id = engine_->backend_id();
    w.features = st.features;
    w.registration = st.registration;
    w.registration_ns = st.registration_ns;
    return link_.send(kWelcome, &w, sizeof w, st.description.data(), st.description.size(), kHandshakeTimeout);
}

bool Session::run_commands(const UcxMessage& m) {
    WireBatch head{};
    if (!header_as(m, &head) || head.count == 0 || head.count > kMaxBatch) return false;
    results_.clear();
    size_t at = 0;
    for (uint32_t i = 0; i < head.count; ++i) {
        WireCommand w{};
        if (!take_struct(m.body, &at, &w)) return false;
        if (w.payload_bytes > VGPU_PAYLOAD_BYTES || m.body.size() - at < w.payload_bytes) return false;
        cmd_.desc = w.desc;
        cmd_.slot = w.slot;
        if (w.payload_bytes) std::memcpy(cmd_.payload.data(), m.body.data() + at, w.payload_bytes);
        at += w.payload_bytes;
        const vgpu::CommandResult r = engine_->execute(cmd_);
        ++stats_.commands;
        put_struct(&results_, WireResult{{r.result[0], r.result[1]}, r.status, r.write_payload ? 1u : 0u});
        if (r.write_payload) results_.insert(results_.end(), cmd_.payload.begin(), cmd_.payload.end());
    }
    if (at != m.body.size()) return false;
    ++stats_.batches;
    const WireBatch back{head.seq, head.count, 0};
    return link_.send(kResults, &back, sizeof back, results_.data(), results_.size());
}

bool Session::run_control(const UcxMessage& m, bool* stopped) {
    WireControl c{};
    if (!header_as(m, &c)) return false;
    if (c.op == static_cast<uint32_t>(ControlOp::Reset)) {
        engine_->reset();
    } else if (c.op == static_cast<uint32_t>(ControlOp::Stop)) {
        engine_->stop();
        *stopped = true;
    } else {
        return false;
    }
    if (!link_.send(kControlDone, &c, sizeof c, nullptr, 0)) return false;
    if (*stopped) link_.wait_for_peer_to_leave(std::chrono::seconds(2));
    return true;
}

void Session::serve(const std::atomic<bool>& stop) {
    bool stopped = false;
    while (!stopped && !stop.load(std::memory_order_relaxed)) {
        UcxMessage m;
        if (!link_.receive_any(&m, Clock::now() + std::chrono::milliseconds(200))) {
            if (link_.peer_lost()) break;
            continue;
        }
        const bool ok = m.id == kCommands ? run_commands(m) : m.id == kControl ? run_control(m, &stopped) : false;
        if (!ok) {
            if (!link_.peer_lost()) log_warn("gpu-server: a VMM broke the protocol (message %u): session ended", m.id);
            break;
        }
    }
    // Whatever the VMM left (allocations, modules, streams) goes with it.
    if (!stopped) engine_->stop();
}

} // namespace

bool prove_key(UcxLink& link, const GpuServerOptions& opts, GpuServerStats& stats, UcxMessage* proof_message) {
    const auto deadline = Clock::now() + kHandshakeTimeout;
    UcxMessage& m = *proof_message;
    WireHello hello{};
    if (!link.receive(kHello, &m, deadline)) return false; // gone, or never spoke
    if (!header_as(m, &hello) || hello.magic != kWireMagic) return refuse_challenge(link, stats, "not a kvmtool-gpu VMM");
    if (hello.wire_version != kWireVersion || hello.abi_version != VGPU_ABI_VERSION ||
        hello.layout_hash != VGPU_ABI_LAYOUT_HASH)
        return refuse_challenge(link, stats,
                                "VMM built with vGPU ABI " + std::to_string(hello.abi_version) + ", this server with " +
                                    std::to_string(VGPU_ABI_VERSION) + " (both ends must come from one build)");
    WireChallenge challenge{};
    challenge.magic = kWireMagic;
    challenge.server_nonce = fresh_nonce();
    challenge.server_proof = key_proof(opts.key, "server", hello.client_nonce, challenge.server_nonce);
    if (!link.send(kChallenge, &challenge, sizeof challenge, nullptr, 0, kHandshakeTimeout)) return false;
    WireProof proof{};
    if (!link.receive(kProof, &m, deadline)) return false;
    if (!header_as(m, &proof) ||
        !same_digest(proof.client_proof, key_proof(opts.key, "client", challenge.server_nonce, hello.client_nonce)))
        return refuse(link, stats, kWelcome, WireWelcome{}, "key refused");
    return true;
}

bool serve_session(std::shared_ptr<UcxContext> ctx, ucp_conn_request_h request, const GpuServerOptions& opts,
                   GpuServerStats& stats, const std::atomic<bool>& stop) {
    std::string why;
    auto link = UcxLink::accept(std::move(ctx), request, &why);
    if (!link) {
        log_warn("gpu-server: %s", why.c_str());
        return false;
    }
    Session s(*link, opts, stats);
    if (!s.handshake()) return false;
    ++stats.sessions_started;
    log_info("gpu-server: session started");
    s.serve(stop);
    ++stats.sessions_ended;
    log_info("gpu-server: session ended");
    return true;
}

} // namespace kvmgpu::remote
