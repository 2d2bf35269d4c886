// The C API's error path: -1 or NULL, and kvmgpu_last_error() saying why in
// one line; no KVM needed.
#include <gtest/gtest.h>

#include <string>

#include "kvmgpu/kvmgpu.h"

namespace {

TEST(CApi, BadNamesAreRefusedWithTheChoices) {
    kvmgpu_config* c = kvmgpu_config_new("/no/such/guest.elf");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(kvmgpu_config_set_pages(c, "3M"), -1);
    EXPECT_STREQ(kvmgpu_last_error(), "pages '3M': expected auto, 4K, 2M or 1G");
    EXPECT_EQ(kvmgpu_config_set_pages(c, "2m"), 0);
    EXPECT_EQ(kvmgpu_config_set_doorbell(c, "trap"), -1); // no vGPU yet
    EXPECT_NE(std::string(kvmgpu_last_error()).find("kvmgpu_config_set_vgpu first"), std::string::npos);
    EXPECT_EQ(kvmgpu_config_set_vgpu(c, "gpu", nullptr, 0), -1);
    EXPECT_STREQ(kvmgpu_last_error(), "vgpu backend 'gpu': expected auto, cuda or host");
    EXPECT_EQ(kvmgpu_config_set_vgpu(c, "host", nullptr, 0), 0);
    EXPECT_EQ(kvmgpu_config_set_doorbell(c, "bell"), -1);
    EXPECT_EQ(kvmgpu_config_add_env(c, "NOVALUE"), -1);
    EXPECT_STREQ(kvmgpu_last_error(), "env: expected K=V, got 'NOVALUE'");
    EXPECT_EQ(kvmgpu_config_set_stdio(c, "tty"), -1);
    EXPECT_STREQ(kvmgpu_last_error(), "stdio: expected console or raw, got 'tty'");
    EXPECT_EQ(kvmgpu_config_set_stdio(c, nullptr), -1);
    EXPECT_EQ(kvmgpu_config_set_stdio(c, "raw"), 0);
    kvmgpu_config_free(c);
    EXPECT_EQ(kvmgpu_config_new(nullptr), nullptr);
}

TEST(CApi, CreateFailsWithTheConfigurationsReason) {
    kvmgpu_config* c = kvmgpu_config_new("/no/such/guest.elf");
    ASSERT_EQ(kvmgpu_config_set_timeout(c, -5), 0); // checked when the VM is made
    EXPECT_EQ(kvmgpu_vm_create(c), nullptr);
    EXPECT_NE(std::string(kvmgpu_last_error()).find("timeout_s:"), std::string::npos) << kvmgpu_last_error();
    kvmgpu_config_free(c);
    EXPECT_STREQ(kvmgpu_outcome_name(KVMGPU_TIMEOUT), "timeout");
    EXPECT_STREQ(kvmgpu_outcome_name(99), "?");
}

} // namespace
