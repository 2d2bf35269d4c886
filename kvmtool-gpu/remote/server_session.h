// One VMM's session on the GPU server: the handshake (versions, the key
// proved both ways, the RAM table), then its commands, one at a time, until
// it stops or goes away. Runs on a thread of its own.
#pragma once

#include <atomic>
#include <memory>

#include "kvmtool-gpu/remote/gpu_server.h"
#include "kvmtool-gpu/remote/ucx_link.h"

namespace kvmgpu::remote {

void serve_session(std::shared_ptr<UcxContext> ctx, ucp_conn_request_h request, const GpuServerOptions& opts,
                   GpuServerStats& stats, const std::atomic<bool>& stop);

} // namespace kvmgpu::remote
