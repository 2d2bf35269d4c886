// Reads a fuzz input from the front as little-endian values; past the end
// every read yields zeros, so any byte string is a valid program.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace kvmgpu::fuzz {

class Input {
public:
    Input(const uint8_t* p, size_t n) : p_(p), n_(n) {}
    bool empty() const { return n_ == 0; }
    template <typename T>
    T get() {
        T v{};
        const size_t k = std::min(sizeof(T), n_);
        if (k) std::memcpy(&v, p_, k);
        p_ += k, n_ -= k;
        return v;
    }
    std::span<const uint8_t> bytes(size_t want) {
        const size_t k = std::min(want, n_);
        std::span<const uint8_t> out(p_, k);
        p_ += k, n_ -= k;
        return out;
    }

private:
    const uint8_t* p_;
    size_t n_;
};

} // namespace kvmgpu::fuzz
