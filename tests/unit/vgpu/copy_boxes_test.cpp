// for_each_registered_box: every byte of a pitched copy moved once, to the
// right place, with no box's host rows crossing a registration boundary.
#include "kvmtool-gpu/devices/vgpu/backends/copy_boxes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

namespace kvmgpu::vgpu {
namespace {

// Host memory cut into registrations at `cuts` (offsets into `ram`).
struct Pieces {
    const uint8_t* ram;
    std::set<uint64_t> cuts;
    uint64_t bytes_left(const uint8_t* p, uint64_t left) const {
        const auto next = cuts.upper_bound(static_cast<uint64_t>(p - ram));
        return next == cuts.end() ? left : std::min(left, *next - static_cast<uint64_t>(p - ram));
    }
    // Whether a box side's every row lies in one piece.
    bool rows_inside(const CopySide& s, const Copy3D& b) const {
        for (uint64_t z = 0; z < b.depth; ++z)
            for (uint64_t y = 0; y < b.height; ++y) {
                const uint8_t* row = s.host + z * s.pitch * s.height + y * s.pitch;
                if (bytes_left(row, b.width_bytes) < b.width_bytes) return false;
            }
        return true;
    }
    // Whether the box's whole host span lies in one piece (what the driver needs).
    bool span_inside(const CopySide& s, const Copy3D& b) const {
        const uint64_t span = (b.depth - 1) * s.pitch * s.height + (b.height - 1) * s.pitch + b.width_bytes;
        return bytes_left(s.host, span) == span;
    }
};

// A CPU copy of one box between two host sides.
void copy_on_cpu(const Copy3D& b) {
    for (uint64_t z = 0; z < b.depth; ++z)
        for (uint64_t y = 0; y < b.height; ++y)
            std::memcpy(b.dst.host + z * b.dst.pitch * b.dst.height + y * b.dst.pitch,
                        b.src.host + z * b.src.pitch * b.src.height + y * b.src.pitch, b.width_bytes);
}

CopySide host_side(uint8_t* p, uint64_t pitch, uint64_t height) {
    CopySide s;
    s.kind = VGPU_COPY_HOST;
    s.host = p;
    s.pitch = pitch;
    s.height = height;
    return s;
}

struct Case {
    uint64_t width, height, depth, src_pitch, dst_pitch, src_rows, dst_rows;
    std::vector<uint64_t> cuts; // offsets in the shared buffer
};

void expect_moved_right(const Case& c) {
    const uint64_t src_bytes = c.src_pitch * c.src_rows * c.depth, dst_bytes = c.dst_pitch * c.dst_rows * c.depth;
    std::vector<uint8_t> ram(src_bytes + dst_bytes + 64);
    for (size_t i = 0; i < ram.size(); ++i) ram[i] = static_cast<uint8_t>(i * 131 + (i >> 8));
    std::vector<uint8_t> want = ram;
    Copy3D copy;
    copy.src = host_side(ram.data() + 7, c.src_pitch, c.src_rows);
    copy.dst = host_side(ram.data() + 7 + src_bytes, c.dst_pitch, c.dst_rows);
    copy.width_bytes = c.width, copy.height = c.height, copy.depth = c.depth;
    Copy3D reference = copy;
    reference.src.host = want.data() + 7, reference.dst.host = want.data() + 7 + src_bytes;
    copy_on_cpu(reference);

    Pieces pieces{ram.data(), {c.cuts.begin(), c.cuts.end()}};
    int boxes = 0;
    const int r = for_each_registered_box(
        copy, [&](const uint8_t* p, uint64_t left) { return pieces.bytes_left(p, left); },
        [&](const Copy3D& b) {
            ++boxes;
            EXPECT_TRUE(pieces.rows_inside(b.src, b) && pieces.rows_inside(b.dst, b)) << "box " << boxes;
            EXPECT_TRUE(pieces.span_inside(b.src, b) && pieces.span_inside(b.dst, b)) << "box " << boxes;
            copy_on_cpu(b);
            return 0;
        });
    EXPECT_EQ(r, 0);
    EXPECT_TRUE(ram == want) << boxes << " boxes";
    if (c.cuts.empty()) {
        EXPECT_EQ(boxes, 1) << "nothing to cut: one box";
    }
}

TEST(CopyBoxes, OneBoxWhereNothingIsCut) { expect_moved_right({40, 9, 3, 64, 48, 10, 9, {}}); }

TEST(CopyBoxes, RowsCutWhereRegistrationsMeet) {
    // A cut inside the source's 4th row and one between the destination's rows.
    expect_moved_right({40, 9, 1, 64, 48, 9, 9, {7 + 3 * 64 + 10, 7 + 9 * 64 + 5 * 48}});
}

TEST(CopyBoxes, SlicesAndRowsCutOnBothSides) {
    for (uint64_t step : {13u, 100u, 333u, 1000u})
        for (uint64_t first : {0u, 5u, 77u}) {
            Case c{24, 5, 4, 32, 30, 6, 5, {}};
            for (uint64_t at = first; at < 4096; at += step) c.cuts.push_back(at);
            SCOPED_TRACE(testing::Message() << "cuts every " << step << " from " << first);
            expect_moved_right(c);
        }
}

TEST(CopyBoxes, WholeSlicesGoTogetherWhenTheyFit) {
    Case c{16, 4, 6, 16, 16, 4, 4, {7 + 3 * 64}}; // source slices 0-2 fit, then 3-5
    std::vector<uint8_t> ram(1024);
    Copy3D copy;
    copy.src = host_side(ram.data() + 7, c.src_pitch, c.src_rows);
    copy.dst = {};
    copy.dst.kind = VGPU_COPY_DEVICE, copy.dst.dptr = 0x1000, copy.dst.pitch = 16, copy.dst.height = 4;
    copy.width_bytes = c.width, copy.height = c.height, copy.depth = c.depth;
    Pieces pieces{ram.data(), {c.cuts.begin(), c.cuts.end()}};
    std::vector<std::pair<uint64_t, uint64_t>> got; // device address, depth
    for_each_registered_box(
        copy, [&](const uint8_t* p, uint64_t left) { return pieces.bytes_left(p, left); },
        [&](const Copy3D& b) {
            got.emplace_back(b.dst.dptr, b.depth);
            return 0;
        });
    const std::vector<std::pair<uint64_t, uint64_t>> want = {{0x1000, 3}, {0x1000 + 3 * 64, 3}};
    EXPECT_EQ(got, want);
}

TEST(CopyBoxes, ArraysMoveByOffsetsAndTheFirstFailureStops) {
    std::vector<uint8_t> ram(4096);
    Copy3D copy;
    copy.src = host_side(ram.data(), 100, 10);
    copy.dst.kind = VGPU_COPY_ARRAY, copy.dst.x_bytes = 4, copy.dst.y = 2, copy.dst.z = 1;
    copy.width_bytes = 60, copy.height = 10, copy.depth = 2;
    Pieces pieces{ram.data(), {550}}; // inside row 5 of slice 0
    std::vector<Copy3D> got;
    const int r = for_each_registered_box(
        copy, [&](const uint8_t* p, uint64_t left) { return pieces.bytes_left(p, left); },
        [&](const Copy3D& b) {
            got.push_back(b);
            return got.size() == 3 ? 42 : 0;
        });
    EXPECT_EQ(r, 42);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].height, 5u); // rows 0-4
    EXPECT_EQ(got[1].dst.y, 2u + 5) << "row 5, cut at x = 50";
    EXPECT_EQ(got[1].width_bytes, 50u);
    EXPECT_EQ(got[2].dst.x_bytes, 4u + 50);
    EXPECT_EQ(got[2].src.host, ram.data() + 550);
}

} // namespace
} // namespace kvmgpu::vgpu
