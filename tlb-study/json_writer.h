// A minimal streaming JSON writer for the harness's result files: objects,
// arrays, strings (escaped), numbers (non-finite ones become null), bools.
// Misuse (a value where a key is due) is the caller's bug; no validation.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string_view>
#include <vector>

namespace tlbstudy {

class JsonWriter {
public:
    explicit JsonWriter(std::ostream& os) : os_(os) {}

    JsonWriter& begin_object() { return open('{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array() { return open('['); }
    JsonWriter& end_array() { return close(']'); }

    JsonWriter& key(std::string_view k) {
        separate();
        string(k);
        os_ << ": ";
        after_key_ = true;
        return *this;
    }
    JsonWriter& value(std::string_view s) {
        separate();
        string(s);
        return *this;
    }
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(bool b) {
        separate();
        os_ << (b ? "true" : "false");
        return *this;
    }
    JsonWriter& value(double d) {
        separate();
        if (!std::isfinite(d)) {
            os_ << "null";
        } else {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.10g", d);
            os_ << buf;
        }
        return *this;
    }
    JsonWriter& value(uint64_t v) {
        separate();
        os_ << v;
        return *this;
    }
    JsonWriter& value(int64_t v) {
        separate();
        os_ << v;
        return *this;
    }
    JsonWriter& value(uint32_t v) { return value(uint64_t{v}); }
    JsonWriter& null() {
        separate();
        os_ << "null";
        return *this;
    }
    // key + value in one call.
    template <typename T>
    JsonWriter& field(std::string_view k, const T& v) {
        key(k);
        return value(v);
    }

private:
    JsonWriter& open(char c) {
        separate();
        os_ << c;
        first_.push_back(true);
        return *this;
    }
    JsonWriter& close(char c) {
        const bool empty = first_.back();
        first_.pop_back();
        if (!empty) newline();
        os_ << c;
        if (first_.empty()) os_ << '\n';
        return *this;
    }
    void separate() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (first_.empty()) return;
        if (!first_.back()) os_ << ',';
        first_.back() = false;
        newline();
    }
    void newline() {
        os_ << '\n';
        for (size_t i = 0; i < first_.size(); ++i) os_ << "  ";
    }
    void string(std::string_view s) {
        os_ << '"';
        for (unsigned char c : s) {
            switch (c) {
            case '"': os_ << "\\\""; break;
            case '\\': os_ << "\\\\"; break;
            case '\n': os_ << "\\n"; break;
            case '\r': os_ << "\\r"; break;
            case '\t': os_ << "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    os_ << buf;
                } else {
                    os_ << c;
                }
            }
        }
        os_ << '"';
    }

    std::ostream& os_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

} // namespace tlbstudy
