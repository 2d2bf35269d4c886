// One VMM's session on the GPU server: the handshake (versions, the key
// proved both ways, the RAM table), then its commands, one at a time, until
// it stops or goes away. Runs in a process of its own (session_process.h).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "kvmtool-gpu/remote/gpu_server.h"
#include "kvmtool-gpu/remote/ucx_link.h"

namespace kvmgpu::remote {

// The VMM's HELLO checked and the key proved both ways: true with the VMM's
// PROOF (its RAM table) in *proof_message; false when it went or was
// refused (told why, logged, counted).
bool prove_key(UcxLink& link, const GpuServerOptions& opts, GpuServerStats& stats, UcxMessage* proof_message);

// Refuses a VMM that proved its key in the WELCOME it waits for, `why` as
// its body (logged, counted); false, as a refused handshake.
bool refuse_welcome(UcxLink& link, GpuServerStats& stats, const std::string& why);

// The whole session of the VMM behind `request`: false when it was refused
// or went before WELCOME (no session).
bool serve_session(std::shared_ptr<UcxContext> ctx, ucp_conn_request_h request, const GpuServerOptions& opts,
                   GpuServerStats& stats, const std::atomic<bool>& stop);

} // namespace kvmgpu::remote
