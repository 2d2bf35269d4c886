// UCX's UCP API, found at run time: libucp.so.0 is dlopen'ed and each entry
// point resolved by name, so the VMM builds, starts and runs local GPU work
// on machines without UCX; only a remote GPU (gpu-server, --gpu-remote)
// needs it. Members carry UCX's own names: ucx.ucp_worker_progress(w).
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace kvmgpu::remote {

#define KVMGPU_UCX_FUNCTIONS(X)                                                                                  \
    X(ucp_config_read) X(ucp_config_release) X(ucp_init_version) X(ucp_cleanup) X(ucp_worker_create)             \
    X(ucp_worker_destroy) X(ucp_worker_progress) X(ucp_worker_get_efd) X(ucp_worker_arm) X(ucp_worker_set_am_recv_handler) X(ucp_listener_create)        \
    X(ucp_listener_destroy) X(ucp_listener_query) X(ucp_listener_reject) X(ucp_conn_request_query)              \
    X(ucp_ep_create) X(ucp_ep_close_nbx) X(ucp_am_send_nbx) X(ucp_am_recv_data_nbx) X(ucp_request_check_status) \
    X(ucp_request_free) X(ucs_status_string)

struct UcxApi {
#define KVMGPU_UCX_MEMBER(name) decltype(&::name) name = nullptr;
    KVMGPU_UCX_FUNCTIONS(KVMGPU_UCX_MEMBER)
#undef KVMGPU_UCX_MEMBER
};

// The process's one table, loaded at the first call; nullptr with *why
// (one line: which library or entry point is missing) when UCX cannot be used.
const UcxApi* ucx_api(std::string* why);

} // namespace kvmgpu::remote
