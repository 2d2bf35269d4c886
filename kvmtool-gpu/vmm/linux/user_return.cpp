#include "kvmtool-gpu/vmm/linux/user_return.h"

#include <cstdio>

namespace kvmgpu::linux_abi {

namespace {
constexpr uint64_t kCf = 1ull << 0, kPf = 1ull << 2, kAf = 1ull << 4, kZf = 1ull << 6, kSf = 1ull << 7,
                   kTf = 1ull << 8, kDf = 1ull << 10, kOf = 1ull << 11, kAc = 1ull << 18, kId = 1ull << 21;
constexpr uint64_t kUserChangeable = kCf | kPf | kAf | kZf | kSf | kTf | kDf | kOf | kAc | kId;
constexpr uint64_t kUserTop = 1ull << 47;
} // namespace

uint64_t user_rflags(uint64_t r11) { return (r11 & kUserChangeable) | kUserRflags; }

std::string user_return_refusal(uint64_t rcx) {
    if (rcx < kUserTop) return "";
    char line[160];
    std::snprintf(line, sizeof line,
                  "guest fault: a system call's return address 0x%llx (RCX) is not a canonical user address",
                  static_cast<unsigned long long>(rcx));
    return line;
}

} // namespace kvmgpu::linux_abi
