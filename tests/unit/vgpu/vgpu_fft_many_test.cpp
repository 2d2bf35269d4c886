// cuFFT's extensible plans (VGPU_OP_FFT_PLAN_MANY, FFT_SET_WORK_AREA;
// dispatch_fft.cpp): the advanced layout's spans and refusals, and execs
// on the host backend's DFT checked against a DFT computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/fft_library.h"
#include "tests/support/host_libraries.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

using Cx = std::complex<double>;

vgpu_fft_plan_many many(uint32_t rank, uint32_t type, std::initializer_list<int64_t> n, int64_t batch) {
    vgpu_fft_plan_many m{};
    m.rank = rank;
    m.type = type;
    int d = 0;
    for (int64_t v : n) m.n[d] = v, m.inembed[d] = v, m.onembed[d] = v, ++d;
    for (; d < 3; ++d) m.n[d] = m.inembed[d] = m.onembed[d] = 1;
    m.istride = m.ostride = m.idist = m.odist = 1;
    m.batch = batch;
    return m;
}

TEST(FftShapeMany, AdvancedSpansAndRefusals) {
    const uint64_t n[3] = {4, 6, 1};
    FftShape::Layout in{{1, 8, 1}, 2, 100}, out{{1, 6, 1}, 1, 24}, half{{1, 4, 1}, 1, 24};
    // C2C 4 x 6, batch 3: the input's last element at 2 * 100 + 2 * (5 + 8 * 3) = 258.
    auto s = FftShape::many(n, 2, 0x29, 3, true, in, out);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->input_bytes(), 259 * 8u);
    EXPECT_EQ(s->output_bytes(), (2 * 24 + 5 + 6 * 3 + 1) * 8u);
    EXPECT_FALSE(FftShape::many(n, 2, 0x29, 3, true, in, half)); // onembed[1] = 4 < 6
    // R2C: the output's last dimension is 6 / 2 + 1 = 4 complex numbers; onembed[1] = 4 holds it.
    auto r = FftShape::many(n, 2, 0x2a, 1, true, FftShape::Layout{{1, 6, 1}, 1, 24}, half);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->input_bytes(), 24 * 4u);
    EXPECT_EQ(r->output_bytes(), 16 * 8u);
    // An embed smaller than its dimension, a zero stride, spans that overflow.
    EXPECT_FALSE(FftShape::many(n, 2, 0x29, 1, true, FftShape::Layout{{1, 5, 1}, 1, 1}, out));
    EXPECT_FALSE(FftShape::many(n, 2, 0x29, 1, true, FftShape::Layout{{1, 8, 1}, 0, 1}, out));
    EXPECT_FALSE(FftShape::many(n, 2, 0x29, 3, true, FftShape::Layout{{1, 8, 1}, 1, 1ull << 62}, out));
    EXPECT_FALSE(FftShape::many(n, 2, 0x29, 1, true, FftShape::Layout{{1, 1ull << 62, 1}, 4, 1}, out));
    EXPECT_FALSE(FftShape::many(n, 2, 0x29, 1, true, FftShape::Layout{{1, 8, 1}, ~0ull, 1}, out)); // negative
    EXPECT_FALSE(FftShape::many(n, 2, 0x29, 2, true, in, FftShape::Layout{{1, 4, 1}, 1, uint64_t(-5)}));
    // The basic layout ignores strides and distances, as cuFFT does.
    auto b = FftShape::many(n, 2, 0x29, 2, false, FftShape::Layout{{1, 0, 1}, 0, 0}, out);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->input_bytes(), 48 * 8u);
}

struct VgpuFftMany : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 64ull << 20, .max_handles = 8}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }
    Done plan(const vgpu_fft_plan_many& m, int64_t len = -1) {
        return rig.call({.opcode = VGPU_OP_FFT_PLAN_MANY, .payload = bytes(m), .payload_len = len});
    }
    uint32_t exec(uint64_t p, uint64_t in, uint64_t out, uint64_t type, int64_t dir) {
        return rig.call({.opcode = VGPU_OP_FFT_EXEC, .args = {p, in, out, type, uint64_t(dir)}}).status;
    }
    void upload(uint64_t d, const void* src, uint64_t n) {
        rig.put(kDataGpa, src, n);
        ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, n, 0}}).status, VGPU_SUCCESS);
    }
    template <class T>
    std::vector<T> download(uint64_t d, size_t n) {
        std::vector<T> v(n);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, n * sizeof(T), 0}}).status, VGPU_SUCCESS);
        rig.get(kDataGpa, v.data(), n * sizeof(T));
        return v;
    }
};

// A batch of 2 C2C transforms of 5 points, read with stride 3 and distance
// 17, written densely: against a DFT computed here.
TEST_F(VgpuFftMany, StridedBatchedC2CMatchesADft) {
    vgpu_fft_plan_many m = many(1, 0x29, {5}, 2);
    m.flags = VGPU_FFT_ADVANCED;
    m.istride = 3, m.idist = 17, m.ostride = 1, m.odist = 5;
    const Done p = plan(m);
    ASSERT_EQ(p.status, VGPU_SUCCESS);
    std::vector<float> in(2 * (17 + 13) + 2, -99.f); // complex floats; holes stay -99
    Cx x[2][5];
    for (int b = 0; b < 2; ++b)
        for (int i = 0; i < 5; ++i) {
            x[b][i] = Cx(b + i * 0.5, 1.0 - i);
            in[2 * (b * 17 + i * 3)] = float(x[b][i].real());
            in[2 * (b * 17 + i * 3) + 1] = float(x[b][i].imag());
        }
    const uint64_t din = rig.alloc(in.size() * 4), dout = rig.alloc(10 * 8);
    upload(din, in.data(), in.size() * 4);
    ASSERT_EQ(exec(p.r0, din, dout, 0x29, -1), VGPU_SUCCESS);
    const auto y = download<float>(dout, 20);
    for (int b = 0; b < 2; ++b)
        for (int k = 0; k < 5; ++k) {
            Cx want = 0;
            for (int i = 0; i < 5; ++i) want += x[b][i] * std::polar(1.0, -2 * M_PI * i * k / 5);
            EXPECT_NEAR(y[2 * (b * 5 + k)], want.real(), 1e-4) << b << "," << k;
            EXPECT_NEAR(y[2 * (b * 5 + k) + 1], want.imag(), 1e-4) << b << "," << k;
        }
    // The input's span is 17 + 4 * 3 + 1 = 30 complex numbers: one less and it is refused.
    const uint64_t small = rig.alloc(29 * 8);
    EXPECT_EQ(exec(p.r0, small, dout, 0x29, -1), VGPU_ERROR_INVALID_VALUE);
}

// 2-D R2C of a batch (which the basic API cannot plan), dense.
TEST_F(VgpuFftMany, BatchedTwoDimensionalR2C) {
    const Done p = plan(many(2, 0x2a, {2, 4}, 2));
    ASSERT_EQ(p.status, VGPU_SUCCESS);
    const float x[16] = {1, 2, 3, 4, 5, 6, 7, 8, /* second */ 1, 0, 0, 0, 0, 0, 0, 0};
    const uint64_t din = rig.alloc(sizeof x), dout = rig.alloc(2 * 2 * 3 * 8);
    upload(din, x, sizeof x);
    ASSERT_EQ(exec(p.r0, din, dout, 0x2a, 0), VGPU_SUCCESS);
    const auto y = download<float>(dout, 24);
    EXPECT_NEAR(y[0], 36, 1e-4); // the first member's sum
    EXPECT_NEAR(y[6], -16, 1e-4); // its (1, 0) bin: 10 - 26
    for (int i = 12; i < 24; i += 2) EXPECT_NEAR(y[i], 1, 1e-5) << i; // an impulse: every bin 1
}

TEST_F(VgpuFftMany, RefusesBadPlansAndWorkAreas) {
    vgpu_fft_plan_many m = many(1, 0x29, {8}, 1);
    EXPECT_EQ(plan(m, sizeof m - 8).status, VGPU_ERROR_INVALID_VALUE); // not the struct
    m.flags = 4;
    EXPECT_EQ(plan(m).status, VGPU_ERROR_INVALID_VALUE);
    m.flags = 0, m.reserved = 1;
    EXPECT_EQ(plan(m).status, VGPU_ERROR_INVALID_VALUE);
    m.reserved = 0, m.n[0] = -8;
    EXPECT_EQ(plan(m).status, VGPU_ERROR_INVALID_VALUE);
    m.n[0] = 8, m.batch = 0;
    EXPECT_EQ(plan(m).status, VGPU_ERROR_INVALID_VALUE);
    m.batch = 1, m.rank = 4;
    EXPECT_EQ(plan(m).status, VGPU_ERROR_INVALID_VALUE);
    m.rank = 1, m.type = 0x30;
    EXPECT_EQ(plan(m).status, VGPU_ERROR_INVALID_VALUE);
    m.type = 0x29, m.flags = VGPU_FFT_ADVANCED, m.istride = -1;
    EXPECT_EQ(plan(m).status, VGPU_ERROR_INVALID_VALUE);
    m.istride = 1;
    m.flags = VGPU_FFT_NO_AUTO_ALLOCATION;
    const Done p = plan(m);
    ASSERT_EQ(p.status, VGPU_SUCCESS);
    EXPECT_EQ(p.r1, 0u); // the host backend needs no work area
    const uint64_t d = rig.alloc(64);
    auto area = [&](uint64_t plan_h, uint64_t at) {
        return rig.call({.opcode = VGPU_OP_FFT_SET_WORK_AREA, .args = {plan_h, at}}).status;
    };
    EXPECT_EQ(area(p.r0, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(area(p.r0, 0x1000), VGPU_ERROR_INVALID_VALUE); // not the VM's memory
    EXPECT_EQ(area(p.r0, d + 64), VGPU_ERROR_INVALID_VALUE);  // one past its allocation
    EXPECT_EQ(area(p.r0 ^ 1, d), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(area(p.r0, d), VGPU_SUCCESS);
    EXPECT_EQ(exec(p.r0, d, d, 0x29, 1), VGPU_SUCCESS);
    // The area freed: the next exec is refused, not run on freed memory.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_SUCCESS);
    const uint64_t d2 = rig.alloc(64);
    if (d2 != d) {
        EXPECT_EQ(exec(p.r0, d2, d2, 0x29, 1), VGPU_ERROR_INVALID_VALUE);
    }
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FFT_DESTROY, .args = {p.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(host_fft_of(*rig.host).live_plans(), 0u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
