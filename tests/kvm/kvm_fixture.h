// Shared set-up for tests that need /dev/kvm: skip with the reason when it
// is missing, and helpers to boot a guest image in-process.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::test {

class KvmTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        if (!KvmSystem::available(&why)) GTEST_SKIP() << "needs KVM: " << why;
        kvm_ = std::make_unique<KvmSystem>();
    }
    VmOptions quiet_options(const std::string& image) {
        VmOptions o;
        o.guest_path = image;
        o.ram_bytes = 64ull << 20;
        o.timeout_s = 20;
        o.console = [this](std::string_view l) { console_.emplace_back(l); };
        return o;
    }
    std::unique_ptr<KvmSystem> kvm_;
    std::vector<std::string> console_;
};

// A built guest image: $KVMGPU_GUEST_DIR first (a build carried elsewhere),
// then the build tree's guest directory.
inline std::string guest_image(const std::string& name) {
    const char* env = std::getenv("KVMGPU_GUEST_DIR");
    return std::string(env ? env : KVMGPU_GUEST_DIR) + "/" + name + ".elf";
}

inline uint64_t free_huge_pages(const char* size_dir) {
    std::ifstream f(std::string("/sys/kernel/mm/hugepages/") + size_dir + "/free_hugepages");
    uint64_t n = 0;
    f >> n;
    return n;
}

} // namespace kvmgpu::test
