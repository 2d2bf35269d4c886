#include "kvmtool-gpu/vmm/linux/linux_stack.h"

#include <elf.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace kvmgpu::linux_abi {

std::array<uint8_t, 16> startup_random(std::optional<uint64_t> seed) {
    std::array<uint8_t, 16> out{};
    if (!seed) {
        if (::getrandom(out.data(), out.size(), 0) != static_cast<ssize_t>(out.size()))
            throw std::runtime_error(std::string("AT_RANDOM: getrandom: ") + std::strerror(errno));
        return out;
    }
    uint64_t r = *seed * 0x9e3779b97f4a7c15ull + 1;
    for (auto& b : out) b = static_cast<uint8_t>((r = r * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    return out;
}

StartupStack build_startup_stack(uint64_t top, const StartupInfo& info) {
    if (top % 16) throw std::invalid_argument("start-up stack: top not 16-byte aligned");
    uint64_t string_bytes = info.execfn.size() + info.platform.size() + 2 + 16;
    auto check = [&](const std::string& s) {
        if (s.find('\0') != std::string::npos) throw std::invalid_argument("guest argument or environment holds a NUL byte");
        string_bytes += s.size() + 1;
    };
    for (const auto& s : info.argv) check(s);
    for (const auto& s : info.envp) check(s);
    check(info.execfn);
    if (string_bytes > kMaxStartupBytes || info.argv.size() + info.envp.size() > kMaxStartupBytes / 8)
        throw std::invalid_argument("guest arguments and environment exceed " + std::to_string(kMaxStartupBytes / 1024) +
                                    " KiB");

    // Strings from the top down: execfn, envp, argv, platform, then the random bytes.
    uint64_t used = 0;
    std::vector<std::pair<uint64_t, std::string>> placed;
    auto place = [&](const std::string& s) {
        used += s.size() + 1;
        placed.emplace_back(top - used, s);
        return top - used;
    };
    const uint64_t execfn = place(info.execfn);
    std::vector<uint64_t> envp, argv;
    for (auto it = info.envp.rbegin(); it != info.envp.rend(); ++it) envp.insert(envp.begin(), place(*it));
    for (auto it = info.argv.rbegin(); it != info.argv.rend(); ++it) argv.insert(argv.begin(), place(*it));
    const uint64_t platform = place(info.platform);
    used += 16;
    const uint64_t random = top - used;
    used = (used + 15) & ~uint64_t{15};

    std::vector<uint64_t> words;
    words.push_back(argv.size());
    words.insert(words.end(), argv.begin(), argv.end());
    words.push_back(0);
    words.insert(words.end(), envp.begin(), envp.end());
    words.push_back(0);
    for (const auto& [k, v] : info.auxv) {
        if (k == AT_NULL || k == AT_RANDOM || k == AT_EXECFN || k == AT_PLATFORM) continue;
        words.push_back(k);
        words.push_back(v);
    }
    for (const auto& [k, v] : {std::pair<uint64_t, uint64_t>{AT_RANDOM, random}, {AT_EXECFN, execfn},
                               {AT_PLATFORM, platform}, {AT_NULL, 0}}) {
        words.push_back(k);
        words.push_back(v);
    }
    const uint64_t vector_bytes = ((words.size() * 8) + 15) & ~uint64_t{15};
    const uint64_t total = used + vector_bytes;
    if (total > top) throw std::invalid_argument("start-up stack: top too low");

    StartupStack out;
    out.sp = top - total;
    out.bytes.assign(total, 0);
    std::memcpy(out.bytes.data(), words.data(), words.size() * 8);
    for (const auto& [at, s] : placed) std::memcpy(&out.bytes[at - out.sp], s.c_str(), s.size() + 1);
    std::memcpy(&out.bytes[random - out.sp], info.random.data(), 16);
    return out;
}

} // namespace kvmgpu::linux_abi
