// The structures the guest Driver API declares itself are laid out as
// CUDA 13's cuda.h lays them out: programs built against cuda.h hand them
// to the guest library.
#include <gtest/gtest.h>

#include "tests/unit/guest/cuda_layout_fields.h"

TEST(GuestCudaLayout, EveryFieldAndSizeIsNvidias) {
    const auto guest = kvmgpu::guest_layout::guest_layout();
    const auto cuda = kvmgpu::guest_layout::cuda_layout();
    ASSERT_EQ(guest.size(), cuda.size());
    for (size_t i = 0; i < guest.size(); ++i) EXPECT_EQ(guest[i].second, cuda[i].second) << guest[i].first;
}
