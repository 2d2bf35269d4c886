// A small long-option parser for commands (the CLI's subcommands, the
// studies' bench commands): "--name value", "--name=value" and boolean
// "--flag". Unknown options and missing values become one-line errors,
// never silent defaults.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvmgpu {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ArgParser {
public:
    // `valued`: options that take a value; `flags`: booleans.
    ArgParser(std::set<std::string> valued, std::set<std::string> flags)
        : valued_(std::move(valued)), flags_(std::move(flags)) {}

    void parse(const std::vector<std::string>& args);

    bool has(const std::string& name) const { return values_.count(name) || set_flags_.count(name); }
    std::optional<std::string> get(const std::string& name) const;
    std::string get_or(const std::string& name, const std::string& fallback) const;

private:
    std::set<std::string> valued_, flags_;
    std::map<std::string, std::string> values_;
    std::set<std::string> set_flags_;
};

// "512M", "2G", "1048576", "64K" -> bytes. Throws UsageError naming `what`.
uint64_t parse_size(const std::string& text, const std::string& what);
// A time-out in seconds: finite, >= 0, at most `max_s` (the longest one
// honoured: VcpuWatchdog::kMaxTimeoutS for a VM's); else UsageError naming `what`.
double parse_seconds(const std::string& text, const std::string& what, double max_s);
uint64_t parse_u64(const std::string& text, const std::string& what);
// "4K,64K,1M": a comma-separated list of sizes (empty items skipped), at
// least one. Throws UsageError naming `what`.
std::vector<uint64_t> parse_size_list(const std::string& text, const std::string& what);

} // namespace kvmgpu
