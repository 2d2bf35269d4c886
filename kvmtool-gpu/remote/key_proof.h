// The key a GPU server and its VMMs share out of band, and the proofs each
// side gives that it holds it (HMAC-SHA-256 over both sides' fresh nonces),
// so neither the key nor a replayable answer ever crosses the network.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace kvmgpu::remote {

using Digest = std::array<uint8_t, 32>;
using Nonce = std::array<uint8_t, 32>;

Digest sha256(std::span<const uint8_t> data);
Digest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> message);

// At least 16 bytes: a key file's contents (trailing newlines ignored).
struct SharedKey {
    std::string bytes;
};

// Reads a key file; false with *why (one line) when it is missing, shorter
// than 16 bytes, or readable by others than its owner (mode & 077).
bool load_shared_key(const std::string& path, SharedKey* out, std::string* why);

Nonce fresh_nonce(); // from getrandom

// What side `role` ("server" or "client") proves: HMAC(key, role || first || second).
Digest key_proof(const SharedKey& key, const char* role, const Nonce& first, const Nonce& second);
// Constant-time comparison.
bool same_digest(const Digest& a, const Digest& b);

} // namespace kvmgpu::remote
