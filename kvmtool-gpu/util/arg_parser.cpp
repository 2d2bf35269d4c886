#include "kvmtool-gpu/util/arg_parser.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kvmgpu {

void ArgParser::parse(const std::vector<std::string>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.rfind("--", 0) != 0 || a.size() < 3) throw UsageError("unexpected argument '" + a + "'");
        std::string name = a.substr(2);
        std::optional<std::string> inline_value;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags_.count(name)) {
            if (inline_value) throw UsageError("--" + name + " takes no value");
            set_flags_.insert(name);
        } else if (valued_.count(name)) {
            if (inline_value) values_[name] = *inline_value;
            else if (i + 1 < args.size()) values_[name] = args[++i];
            else throw UsageError("--" + name + " needs a value");
        } else {
            throw UsageError("unknown option --" + name + " (see --help)");
        }
    }
}

std::optional<std::string> ArgParser::get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string ArgParser::get_or(const std::string& name, const std::string& fallback) const {
    return get(name).value_or(fallback);
}

uint64_t parse_u64(const std::string& text, const std::string& what) {
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
        throw UsageError(what + ": '" + text + "' is not a number");
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno || *end) throw UsageError(what + ": '" + text + "' is not a number");
    return v;
}

uint64_t parse_size(const std::string& text, const std::string& what) {
    if (text.empty()) throw UsageError(what + ": empty size");
    uint64_t shift = 0;
    std::string digits = text;
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: break;
    }
    if (shift) digits.pop_back();
    const uint64_t n = parse_u64(digits, what);
    if (n == 0) throw UsageError(what + ": size must be greater than zero");
    if (shift && n > (UINT64_MAX >> shift)) throw UsageError(what + ": '" + text + "' is too large");
    return n << shift;
}

std::vector<uint64_t> parse_size_list(const std::string& text, const std::string& what) {
    std::vector<uint64_t> out;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = std::min(text.find(',', at), text.size());
        if (comma > at) out.push_back(parse_size(text.substr(at, comma - at), what));
        at = comma + 1;
    }
    if (out.empty()) throw UsageError(what + ": empty size list");
    return out;
}

double parse_seconds(const std::string& text, const std::string& what, double max_s) {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || errno || *end || !std::isfinite(v) || v < 0)
        throw UsageError(what + ": '" + text + "' is not a non-negative number of seconds");
    if (v > max_s) {
        char longest[32];
        std::snprintf(longest, sizeof longest, "%g", max_s);
        throw UsageError(what + ": '" + text + "' is longer than the longest time-out, " + longest + " s (0 means none)");
    }
    return v;
}

} // namespace kvmgpu
