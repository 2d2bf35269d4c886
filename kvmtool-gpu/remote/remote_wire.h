// The messages between a VMM and a GPU server (UCX active messages: a fixed
// header, then a body). Both ends are built from one tree: the hello
// carries VGPU_ABI_VERSION and the layout hash, and a server refuses a VMM of
// another build. Every field a VMM sends is checked by the server as guest
// input is.
//
//   VMM                                   server
//   HELLO {versions, client nonce}   ->
//                                    <-   CHALLENGE {server nonce, server's proof}
//   PROOF {client's proof, RAM regions}  ->   (only once the server proved the key)
//                                    <-   WELCOME {status, backend, features, description}
//                                    or   REDIRECT {port}: the session is a process of its
//                                         own, listening there; the VMM connects to it and
//                                         says HELLO again (at most once)
//   COMMANDS {seq, count; descriptors and payloads}  ->   runs them in order; meanwhile
//                                    <-   FETCH {gpa, bytes}: the guest RAM a command reads
//   DATA {gpa, bytes; the bytes}     ->
//                                    <-   FETCH_LIST {count; spans}: many small spans at once
//   DATA_LIST {count; spans, then their bytes}  ->   (span_list.h)
//                                    <-   DATA {gpa, bytes; the bytes}: what a command wrote
//                                    <-   DATA_LIST {count; spans, then their bytes}: the same, small spans
//                                    <-   RESULTS {seq, count; statuses, results, payloads}
// A batch is what the ring held: asynchronous commands up to and with the
// first synchronous one (CommandSink::batch_limit).
//   CONTROL {RESET | STOP}           ->   <- CONTROL_DONE
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/remote/key_proof.h"
#include "kvmtool-gpu/remote/ucx_link.h"

namespace kvmgpu::remote {

enum WireId : uint16_t {
    kHello = 0,
    kChallenge = 1,
    kProof = 2,
    kWelcome = 3,
    kCommands = 4,
    kResults = 5,
    kControl = 6,
    kControlDone = 7,
    kFetch = 8,
    kData = 9,
    kRedirect = 10,
    kFetchList = 11,
    kDataList = 12,
};

inline constexpr uint32_t kWireMagic = 0x4b564752; // "KVGR"
inline constexpr uint32_t kWireVersion = 2; // 2: FETCH_LIST and DATA_LIST
inline constexpr uint32_t kMaxRemoteRegions = 16;

struct WireHello {
    uint32_t magic, wire_version, abi_version, reserved;
    uint64_t layout_hash;
    Nonce client_nonce;
};

struct WireChallenge {
    uint32_t magic, status; // status != 0: refused (the body is the reason)
    Nonce server_nonce;
    Digest server_proof;
};

// Followed in the body by `regions` WireRegions.
struct WireProof {
    Digest client_proof;
    uint32_t regions, reserved;
};
struct WireRegion {
    uint64_t gpa, bytes;
};

// FETCH's and DATA's header: a span of guest RAM (DATA's body holds it),
// checked by each receiver against its view of guest RAM.
struct WireSpan {
    uint64_t gpa, bytes;
    bool operator==(const WireSpan&) const = default;
};

// Body: the description (text).
struct WireWelcome {
    uint32_t status; // 0: accepted; else refused, the body says why
    uint32_t backend_id;
    uint64_t features;
    uint32_t registration; // vgpu_status of registering RAM with the backend
    uint32_t reserved;
    uint64_t registration_ns;
};

// FETCH_LIST's and DATA_LIST's header (their bodies: span_list.h).
struct WireSpanList {
    uint32_t count, reserved;
};

// The port of the session's own process, on the host the VMM reached.
struct WireRedirect {
    uint32_t port, reserved;
};

inline constexpr uint32_t kMaxBatch = 256;

// The header of COMMANDS and of RESULTS.
struct WireBatch {
    uint64_t seq;
    uint32_t count, reserved;
};
// COMMANDS' body: `count` of these, each followed by its payload's first
// payload_bytes = min(desc.payload_len, VGPU_PAYLOAD_BYTES) bytes.
struct WireCommand {
    vgpu_command desc;
    uint32_t slot, payload_bytes;
};
// RESULTS' body: `count` of these, each followed by VGPU_PAYLOAD_BYTES when
// write_payload.
struct WireResult {
    uint64_t result[2];
    uint32_t status;
    uint32_t write_payload;
};

enum class ControlOp : uint32_t { Reset = 1, Stop = 2 };

using Clock = std::chrono::steady_clock;
inline constexpr auto kHandshakeTimeout = std::chrono::seconds(20);

struct WireControl {
    uint32_t op, reserved;
};

// The structs above, as bytes (both ends are one build: one layout).
// `bytes` as T: false unless it has T's size exactly.
template <typename T>
bool bytes_as(const std::vector<uint8_t>& bytes, T* out) {
    if (bytes.size() != sizeof(T)) return false;
    std::memcpy(out, bytes.data(), sizeof(T));
    return true;
}
template <typename T>
bool header_as(const UcxMessage& m, T* out) {
    return bytes_as(m.header, out);
}
// The next T of a body at *at (moved past it); false when the body is short.
template <typename T>
bool take_struct(const std::vector<uint8_t>& body, size_t* at, T* out) {
    if (*at > body.size() || body.size() - *at < sizeof(T)) return false;
    std::memcpy(out, body.data() + *at, sizeof(T));
    *at += sizeof(T);
    return true;
}
template <typename T>
void put_struct(std::vector<uint8_t>* body, const T& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    body->insert(body->end(), p, p + sizeof(T));
}

} // namespace kvmgpu::remote
