#include "kvmtool-gpu/remote/key_proof.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace kvmgpu::remote {

namespace {

// FIPS 180-4's constants: the first 32 bits of the fractional parts of the
// cube roots of the first 64 primes, and of the square roots of the first 8.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
    0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
    0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void compress(uint32_t h[8], const uint8_t block[64]) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
        w[i] = uint32_t{block[4 * i]} << 24 | uint32_t{block[4 * i + 1]} << 16 | uint32_t{block[4 * i + 2]} << 8 | block[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
        const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; ++i) {
        const uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
        const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

} // namespace

Digest sha256(std::span<const uint8_t> data) {
    uint32_t h[8];
    std::memcpy(h, kInitial, sizeof h);
    size_t i = 0;
    for (; i + 64 <= data.size(); i += 64) compress(h, data.data() + i);
    // The tail, a 1 bit, zeros, and the message's length in bits (big-endian).
    uint8_t last[128] = {};
    const size_t tail = data.size() - i;
    if (tail) std::memcpy(last, data.data() + i, tail);
    last[tail] = 0x80;
    const size_t blocks = tail + 9 <= 64 ? 1 : 2;
    const uint64_t bits = uint64_t{data.size()} * 8;
    for (int b = 0; b < 8; ++b) last[blocks * 64 - 1 - b] = static_cast<uint8_t>(bits >> (8 * b));
    for (size_t b = 0; b < blocks; ++b) compress(h, last + 64 * b);
    Digest out;
    for (int j = 0; j < 8; ++j)
        for (int b = 0; b < 4; ++b) out[4 * j + b] = static_cast<uint8_t>(h[j] >> (24 - 8 * b));
    return out;
}

Digest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> message) {
    uint8_t block[64] = {};
    if (key.size() > 64) {
        const Digest k = sha256(key);
        std::memcpy(block, k.data(), k.size());
    } else if (!key.empty()) {
        std::memcpy(block, key.data(), key.size());
    }
    std::vector<uint8_t> inner(64 + message.size());
    for (int i = 0; i < 64; ++i) inner[i] = block[i] ^ 0x36;
    if (!message.empty()) std::memcpy(inner.data() + 64, message.data(), message.size());
    const Digest inner_digest = sha256(inner);
    uint8_t outer[64 + 32];
    for (int i = 0; i < 64; ++i) outer[i] = block[i] ^ 0x5c;
    std::memcpy(outer + 64, inner_digest.data(), inner_digest.size());
    return sha256(outer);
}

bool load_shared_key(const std::string& path, SharedKey* out, std::string* why) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = "key file '" + path + "': " + std::strerror(errno);
        return false;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *why = "key file '" + path + "': not a regular file";
        return false;
    }
    if (st.st_mode & 077) {
        close(fd);
        *why = "key file '" + path + "': readable by others (chmod 600 it)";
        return false;
    }
    std::string bytes;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && bytes.size() < (1u << 16)) bytes.append(buf, static_cast<size_t>(n));
    close(fd);
    while (!bytes.empty() && (bytes.back() == '\n' || bytes.back() == '\r')) bytes.pop_back();
    if (bytes.size() < 16) {
        *why = "key file '" + path + "': shorter than 16 bytes (make one: head -c 32 /dev/urandom | base64 > FILE)";
        return false;
    }
    out->bytes = std::move(bytes);
    return true;
}

Nonce fresh_nonce() {
    Nonce n{};
    size_t got = 0;
    while (got < n.size()) {
        const ssize_t r = getrandom(n.data() + got, n.size() - got, 0);
        if (r > 0) got += static_cast<size_t>(r);
    }
    return n;
}

Digest key_proof(const SharedKey& key, const char* role, const Nonce& first, const Nonce& second) {
    std::vector<uint8_t> msg(role, role + std::strlen(role));
    msg.insert(msg.end(), first.begin(), first.end());
    msg.insert(msg.end(), second.begin(), second.end());
    return hmac_sha256({reinterpret_cast<const uint8_t*>(key.bytes.data()), key.bytes.size()}, msg);
}

bool same_digest(const Digest& a, const Digest& b) {
    uint8_t diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
    return diff == 0;
}

} // namespace kvmgpu::remote
