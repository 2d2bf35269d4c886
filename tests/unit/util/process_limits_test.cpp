// The VMM's open-file limit: raised to the hard limit, and divided among
// the VMs of a run so each keeps a reserve for its vCPU threads and itself.
#include <sys/resource.h>

#include <gtest/gtest.h>

#include "kvmtool-gpu/util/process_limits.h"

namespace kvmgpu {
namespace {

// The finding's case: --vms 4 under ulimit -n 1024 (soft and hard), 64 threads each.
TEST(ProcessLimits, GuestDescriptorsAreWhatEachVmCanAfford) {
    const uint64_t per_vm = (1024 - 20 - kProcessDescriptorReserve) / 4;
    const uint64_t reserve = kVmDescriptorReserve + 64 * kDescriptorsPerThread;
    EXPECT_EQ(guest_descriptor_limit(1024, 20, 4, 64, 253), per_vm - reserve);
    // All four guests at their limit still leave every VM its threads' descriptors.
    EXPECT_LE(20 + kProcessDescriptorReserve + 4 * (guest_descriptor_limit(1024, 20, 4, 64, 253) + reserve), 1024u);
    EXPECT_EQ(guest_descriptor_limit(1u << 20, 20, 16, 1024, 253), 253u); // plenty: the table's own size
    EXPECT_EQ(guest_descriptor_limit(1024, 20, 16, 64, 253), 0u);         // nothing left: console only
    EXPECT_EQ(guest_descriptor_limit(50, 20, 1, 1, 253), 0u);
    EXPECT_EQ(guest_descriptor_limit(UINT64_MAX, 20, 1, 64, 253), 253u);
}

TEST(ProcessLimits, SoftOpenFileLimitIsRaisedToTheHard) {
    rlimit was{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &was), 0);
    if (was.rlim_max < 128) GTEST_SKIP() << "hard open-file limit " << was.rlim_max << ": too low to lower and raise";
    rlimit low = was;
    low.rlim_cur = 64;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    EXPECT_EQ(open_file_limit(), 64u);
    raise_open_file_limit();
    EXPECT_EQ(open_file_limit(), was.rlim_max == RLIM_INFINITY ? UINT64_MAX : was.rlim_max);
    setrlimit(RLIMIT_NOFILE, &was);
    EXPECT_GE(open_descriptor_count(), 3u); // stdin, stdout, stderr at least
}

} // namespace
} // namespace kvmgpu
