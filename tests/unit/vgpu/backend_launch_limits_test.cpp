// The launch limits (launch_dims_ok, vgpu_abi.h's vgpu_launch_dims_ok) are
// checked by every backend's launch and launch_packed, before the backend
// runs anything: shown with a backend that, like a CUDA driver, would take
// whatever it is given and only counts what reaches it.
#include <gtest/gtest.h>

#include "tests/support/forwarding_backend.h"

namespace kvmgpu::vgpu::test {
namespace {

class TakesAnyLaunch final : public ForwardingBackend {
public:
    int launches = 0;

private:
    Status run_launch(BackendFunction, Dim3, Dim3, uint32_t, BackendStream, std::span<void* const>,
                      std::span<const uint16_t>, LaunchMode) override {
        ++launches;
        return VGPU_SUCCESS;
    }
};

struct Shape {
    Dim3 grid, block;
};
// Each beyond the limits in one way, the block products among them chosen
// to wrap 64 bits to a small number if multiplied first.
const Shape kBeyond[] = {
    {{1, 1, 1}, {2048, 1, 1}},
    {{1, 1, 1}, {32, 32, 2}},
    {{1, 1, 1}, {1, 1, 65}},
    {{1, 1, 1}, {1u << 22, 1u << 22, 1u << 20}},
    {{1u << 31, 1, 1}, {1, 1, 1}},
    {{1, 65536, 1}, {1, 1, 1}},
    {{1, 1, 65536}, {1, 1, 1}},
};

TEST(BackendLaunchLimits, PackedLaunchRefusesShapesBeyondTheLimits) {
    TakesAnyLaunch be;
    const ParamLayout none;
    for (bool cooperative : {false, true}) {
        for (const Shape& s : kBeyond)
            EXPECT_EQ(be.launch_packed(1, s.grid, s.block, 0, 0, {}, none, cooperative), VGPU_ERROR_INVALID_VALUE)
                << s.grid.x << "x" << s.grid.y << "x" << s.grid.z << " blocks of " << s.block.x << "x" << s.block.y
                << "x" << s.block.z;
    }
    EXPECT_EQ(be.launches, 0) << "a refused launch reached the backend";
    EXPECT_EQ(be.launch_packed(1, {0x7fffffffu, 65535, 65535}, {16, 8, 8}, 0, 0, {}, none, false), VGPU_SUCCESS)
        << "the limits themselves are legal";
    EXPECT_EQ(be.launches, 1);
}

TEST(BackendLaunchLimits, KernelParamsLaunchRefusesShapesBeyondTheLimits) {
    TakesAnyLaunch be;
    for (bool cooperative : {false, true}) {
        for (const Shape& s : kBeyond)
            EXPECT_EQ(be.launch(1, s.grid, s.block, 0, 0, {}, {}, cooperative), VGPU_ERROR_INVALID_VALUE)
                << s.grid.x << "x" << s.grid.y << "x" << s.grid.z << " blocks of " << s.block.x << "x" << s.block.y
                << "x" << s.block.z;
    }
    EXPECT_EQ(be.launches, 0) << "a refused launch reached the backend";
    EXPECT_EQ(be.launch(1, {1, 1, 1}, {1024, 1, 1}, 0, 0, {}, {}, true), VGPU_SUCCESS);
    EXPECT_EQ(be.launches, 1);
}

} // namespace
} // namespace kvmgpu::vgpu::test
