// Command-line parsing (see cmdline.h). Pure: bounded by the text length.
#include "guest-stub/runtime/cmdline.h"

namespace guest {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

} // namespace

bool StrView::equals(const char* s) const
{
    size_t i = 0;
    for (; i < len; ++i)
        if (s[i] == '\0' || s[i] != data[i])
            return false;
    return s[i] == '\0';
}

bool StrView::equals_nocase(const char* s) const
{
    size_t i = 0;
    for (; i < len; ++i)
        if (s[i] == '\0' || lower(s[i]) != lower(data[i]))
            return false;
    return s[i] == '\0';
}

Cmdline::Cmdline(const char* text, size_t len) : text_(text ? text : ""), len_(0)
{
    if (text == nullptr)
        return;
    while (len_ < len && text[len_] != '\0')
        ++len_;
}

bool Cmdline::find(const char* key, StrView* value) const
{
    bool found = false;
    size_t i = 0;
    while (i < len_) {
        while (i < len_ && is_space(text_[i]))
            ++i;
        size_t word = i;
        while (i < len_ && !is_space(text_[i]))
            ++i;
        if (word == i)
            break;
        size_t eq = word;
        while (eq < i && text_[eq] != '=')
            ++eq;
        StrView k{text_ + word, eq - word};
        if (k.len != 0 && k.equals(key)) {
            found = true;
            if (value != nullptr) {
                if (eq < i)
                    *value = StrView{text_ + eq + 1, i - eq - 1};
                else
                    *value = StrView{text_ + i, 0};
            }
        }
    }
    return found;
}

bool parse_u64(StrView s, uint64_t* out)
{
    size_t i = 0;
    unsigned base = 10;
    if (s.len >= 2 && s.data[0] == '0' && (s.data[1] == 'x' || s.data[1] == 'X')) {
        base = 16;
        i = 2;
    }
    uint64_t v = 0;
    size_t digits = 0;
    for (; i < s.len; ++i) {
        char c = s.data[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (base == 16 && lower(c) >= 'a' && lower(c) <= 'f')
            d = (unsigned)(lower(c) - 'a' + 10);
        else
            break;
        if (v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
        ++digits;
    }
    if (digits == 0)
        return false;
    if (i < s.len) {
        unsigned shift;
        switch (lower(s.data[i])) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        case 't': shift = 40; break;
        default: return false;
        }
        ++i;
        if (i < s.len && (s.data[i] == 'B' || s.data[i] == 'b' || s.data[i] == 'i'))
            ++i; // 64MB, 64MiB, 64Mb
        if (i < s.len && (s.data[i] == 'B' || s.data[i] == 'b'))
            ++i;
        if (i != s.len)
            return false;
        if (v > (UINT64_MAX >> shift))
            return false;
        v <<= shift;
    }
    *out = v;
    return true;
}

uint64_t Cmdline::get_u64(const char* key, uint64_t def, bool* ok) const
{
    StrView v;
    if (!find(key, &v))
        return def;
    uint64_t out;
    if (!parse_u64(v, &out)) {
        if (ok != nullptr)
            *ok = false;
        return def;
    }
    return out;
}

bool Cmdline::get_bool(const char* key, bool def, bool* ok) const
{
    StrView v;
    if (!find(key, &v))
        return def;
    if (v.len == 0 || v.equals("1") || v.equals_nocase("true") || v.equals_nocase("yes") ||
        v.equals_nocase("on"))
        return true;
    if (v.equals("0") || v.equals_nocase("false") || v.equals_nocase("no") ||
        v.equals_nocase("off"))
        return false;
    if (ok != nullptr)
        *ok = false;
    return def;
}

const char* Cmdline::get_str(const char* key, char* buf, size_t size, const char* def) const
{
    StrView v;
    if (!find(key, &v) || size == 0)
        return def;
    size_t n = v.len < size - 1 ? v.len : size - 1;
    for (size_t i = 0; i < n; ++i)
        buf[i] = v.data[i];
    buf[n] = '\0';
    return buf;
}

} // namespace guest
