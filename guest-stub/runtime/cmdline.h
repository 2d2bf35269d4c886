// The guest command line: whitespace-separated words, each `key=value` or a
// bare `key` (a flag). Lookups return the LAST occurrence of a key, so a
// later word overrides an earlier default. Numbers accept decimal or 0x hex
// and a binary size suffix K, M, G or T (size=64M, n=1K, x=0x1000).
// Pure code: also compiled on the host for the unit tests.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace guest {

// A piece of the command line (not NUL-terminated).
struct StrView {
    const char* data = nullptr;
    size_t len = 0;
    bool equals(const char* s) const;
    bool equals_nocase(const char* s) const;
};

class Cmdline {
public:
    constexpr Cmdline() = default;
    // Views text[0, len) (stops at a NUL before len); keeps the pointer.
    Cmdline(const char* text, size_t len);

    // The value of key (empty for a bare flag); false if absent.
    bool find(const char* key, StrView* value) const;
    bool has(const char* key) const { return find(key, nullptr); }

    // Number or default. If present but unparsable, *ok (when given) is set
    // to false and the default is returned.
    uint64_t get_u64(const char* key, uint64_t def, bool* ok = nullptr) const;
    // 1/0, true/false, yes/no, on/off; a bare flag is true.
    bool get_bool(const char* key, bool def, bool* ok = nullptr) const;
    // Copies the value, NUL-terminated and truncated to size-1 bytes, into
    // buf and returns buf; returns def (buf untouched) if the key is absent.
    const char* get_str(const char* key, char* buf, size_t size, const char* def) const;

    const char* text() const { return text_; }
    size_t length() const { return len_; }

private:
    const char* text_ = "";
    size_t len_ = 0;
};

// Parses a whole view as a number (see above). false on junk or overflow.
bool parse_u64(StrView s, uint64_t* out);

} // namespace guest
