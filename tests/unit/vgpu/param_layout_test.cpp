// ParamLayout: the buffer size every launch must match, well-formed layouts, and natural offsets.
#include "kvmtool-gpu/devices/vgpu/backends/param_layout.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvmgpu::vgpu {
namespace {

TEST(ParamLayout, NaturalOffsetsFollowTheCAbi) {
    const std::vector<uint16_t> sizes{8, 4, 1, 8, 2, 16};
    const auto l = ParamLayout::natural(sizes);
    EXPECT_EQ(l.offsets, (std::vector<uint32_t>{0, 8, 12, 16, 24, 32}));
    EXPECT_EQ(l.total_bytes(), 48u);
    EXPECT_EQ(ParamLayout{}.total_bytes(), 0u);
}

// Security finding 7: the furthest parameter decides the buffer's size,
// whatever order the offsets come in, and overlapping layouts are refused.
TEST(ParamLayout, TotalBytesIsTheFurthestEndInAnyOrder) {
    const ParamLayout shuffled{{16, 0, 8}, {8, 8, 4}};
    EXPECT_EQ(shuffled.total_bytes(), 24u);
    EXPECT_EQ(shuffled.malformed(), "");
    const ParamLayout last_is_not_furthest{{0, 64, 8}, {8, 64, 4}};
    EXPECT_EQ(last_is_not_furthest.total_bytes(), 128u);
}

TEST(ParamLayout, OverlapsAndUnpairedFieldsAreMalformed) {
    const ParamLayout overlap{{0, 4}, {8, 8}};
    EXPECT_NE(overlap.malformed().find("overlap"), std::string::npos);
    const ParamLayout unpaired{{0, 8}, {8}};
    EXPECT_NE(unpaired.malformed().find("2 offsets for 1 sizes"), std::string::npos);
    EXPECT_EQ(ParamLayout::natural(std::vector<uint16_t>{8, 4, 1, 8}).malformed(), "");
}

} // namespace
} // namespace kvmgpu::vgpu
