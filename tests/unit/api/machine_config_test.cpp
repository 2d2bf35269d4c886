// kvmgpu::Machine refuses a bad VmConfig with one kvmgpu::Error line naming
// what is wrong, before it opens /dev/kvm: on a host without KVM the message
// is still the configuration's, not "open /dev/kvm failed".
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"

namespace kvmgpu {
namespace {

std::string refusal(const VmConfig& c) {
    try {
        Machine vm(c);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

VmConfig config() {
    VmConfig c;
    c.guest = "/no/such/guest.elf";
    return c;
}

TEST(MachineConfig, RefusesBadNumbersBeforeLookingForTheGuest) {
    VmConfig c = config();
    c.max_threads = 0;
    EXPECT_EQ(refusal(c), "max_threads: 1..1024, got 0");
    c = config();
    c.timeout_s = -1;
    EXPECT_NE(refusal(c).find("timeout_s:"), std::string::npos);
    c.timeout_s = std::nan("");
    EXPECT_NE(refusal(c).find("timeout_s:"), std::string::npos);
    c = config();
    c.guest = "";
    EXPECT_NE(refusal(c).find("guest: empty"), std::string::npos);
    c = config();
    c.shares.push_back({});
    EXPECT_EQ(refusal(c), "shares: a share with no host_dir");
}

TEST(MachineConfig, AMissingGuestSaysWhereItLooked) {
    const std::string why = refusal(config());
    EXPECT_NE(why.find("/no/such/guest.elf"), std::string::npos) << why;
    EXPECT_EQ(why.find("/dev/kvm"), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

TEST(MachineConfig, RefusesBadVgpuLimits) {
    VmConfig c = config(); // the vGPU is checked before the guest is looked for
    c.vgpu = VgpuSpec{};
    c.vgpu->max_ring = 3;
    EXPECT_NE(refusal(c).find("max_ring must be a power of two"), std::string::npos) << refusal(c);
    c.vgpu = VgpuSpec{};
    c.vgpu->gpus = {};
    EXPECT_EQ(refusal(c), "vgpu.gpus: 1..16 devices, got 0");
    c.vgpu->gpus = {0, 64};
    EXPECT_EQ(refusal(c), "vgpu.gpus: ordinal 64 is outside 0..63");
    c.vgpu = VgpuSpec{};
    c.vgpu->max_handles = 0;
    EXPECT_NE(refusal(c).find("max_handles"), std::string::npos) << refusal(c);
}

// The public defaults are the VMM's own: a drift between them would change
// what an embedding program's guests may ask for.
TEST(MachineConfig, VgpuDefaultsAreTheVmms) {
    const VgpuSpec s;
    const vgpu::VgpuOptions o;
    EXPECT_EQ(s.max_handles, o.max_handles);
    EXPECT_EQ(s.max_graph_nodes, o.max_graph_nodes);
    EXPECT_EQ(s.max_module_bytes, o.max_module_bytes);
    EXPECT_EQ(s.max_registrations, o.max_registrations);
    EXPECT_EQ(s.max_registered_bytes, o.max_registered_bytes);
    EXPECT_EQ(s.max_alias_mappings, o.max_alias_mappings);
    EXPECT_EQ(s.max_ring, o.max_ring);
    EXPECT_EQ(s.poll_spin_us, o.poll_spin_us);
    EXPECT_EQ(s.poll_max_us, o.poll_max_us);
    EXPECT_EQ(s.lazy_ram_registration, o.lazy_ram_registration);
    EXPECT_EQ(std::string(to_string(s.doorbell)), vgpu::to_string(o.doorbell));
}

TEST(MachineConfig, OutcomesHaveTheCliNames) {
    EXPECT_STREQ(to_string(Outcome::GuestExit), "guest-exit");
    EXPECT_STREQ(to_string(Outcome::Interrupted), "interrupted");
    EXPECT_STREQ(to_string(Outcome::Timeout), "timeout");
}

} // namespace
} // namespace kvmgpu
