// The bytes in which a bench's native side hands its result structs from
// its child process back to the runner (native_child.h). A struct names
// its members once, in `auto wire() { return std::tie(...); }`; the same
// walk writes and reads them, so every value arrives as it was measured
// (no text in between). Numbers travel in this machine's byte order: both
// ends are one binary.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kvmgpu::bench::wire {

template <class T>
concept Listed = requires(T& t) { t.wire(); };

class Writer {
public:
    template <class T>
    void put(const T& v) {
        if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
            bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
        } else if constexpr (std::is_same_v<T, std::string>) {
            put(static_cast<uint64_t>(v.size()));
            bytes_ += v;
        } else if constexpr (Listed<T>) {
            std::apply([this](const auto&... m) { (put(m), ...); }, const_cast<T&>(v).wire());
        } else {
            put_sequence(v);
        }
    }
    std::string take() { return std::move(bytes_); }

private:
    template <class A, class B>
    void put_sequence(const std::pair<A, B>& p) {
        put(p.first);
        put(p.second);
    }
    template <class E>
    void put_sequence(const std::vector<E>& v) {
        put(static_cast<uint64_t>(v.size()));
        for (const E& e : v) put(e);
    }
    std::string bytes_;
};

// Reads what a Writer wrote; a short or inconsistent input makes ok() false
// (the values read so far are then meaningless).
class Reader {
public:
    explicit Reader(std::string_view bytes) : in_(bytes) {}
    bool ok() const { return ok_ && at_ == in_.size(); }

    template <class T>
    void get(T& v) {
        if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
            if (!take(&v, sizeof v)) v = T{};
        } else if constexpr (std::is_same_v<T, std::string>) {
            uint64_t n = 0;
            get(n);
            if (!fits(n, 1)) return;
            v.assign(in_.data() + at_, n);
            at_ += n;
        } else if constexpr (Listed<T>) {
            std::apply([this](auto&... m) { (get(m), ...); }, v.wire());
        } else {
            get_sequence(v);
        }
    }

private:
    template <class A, class B>
    void get_sequence(std::pair<A, B>& p) {
        get(p.first);
        get(p.second);
    }
    template <class E>
    void get_sequence(std::vector<E>& v) {
        uint64_t n = 0;
        get(n);
        if (!fits(n, 1)) return; // every element takes a byte at least
        v.assign(n, E{});
        for (E& e : v) get(e);
    }
    bool fits(uint64_t count, uint64_t each) {
        ok_ = ok_ && count <= (in_.size() - at_) / each;
        return ok_;
    }
    bool take(void* out, size_t n) {
        if (!fits(n, 1)) return false;
        std::memcpy(out, in_.data() + at_, n);
        at_ += n;
        return true;
    }
    std::string_view in_;
    size_t at_ = 0;
    bool ok_ = true;
};

} // namespace kvmgpu::bench::wire
