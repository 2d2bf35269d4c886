// Modules, functions, launches (CPU reference kernels on the host backend),
// streams, events, device queries, and the error paths of each.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

std::vector<uint8_t> bytes_of(uint64_t v) { return bytes(v); }

struct VgpuKernels : ::testing::Test {
    VgpuRig rig{VgpuOptions{.max_handles = 8, .max_module_bytes = 4096}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }

    uint64_t upload(const std::vector<float>& v, uint64_t d = 0) {
        if (!d) d = rig.alloc(v.size() * 4);
        rig.put(kDataGpa, v.data(), v.size() * 4);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, v.size() * 4, 0}}).status, VGPU_SUCCESS);
        return d;
    }
    std::vector<float> download(uint64_t d, size_t n) {
        std::vector<float> v(n);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, n * 4, 0}}).status, VGPU_SUCCESS);
        rig.get(kDataGpa, v.data(), n * 4);
        return v;
    }
    static std::vector<std::vector<uint8_t>> abcn(uint64_t a, uint64_t b, uint64_t c, uint32_t n) {
        return {bytes(a), bytes(b), bytes(c), bytes(n)};
    }
};

TEST_F(VgpuKernels, VectorAddComputesAndHonoursCoverage) {
    uint64_t fn;
    rig.module_with("vector_add", &fn);
    const uint32_t n = 1000;
    std::vector<float> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = 0.5f * static_cast<float>(i);
    const uint64_t da = upload(a), db = upload(b), dc = upload(std::vector<float>(n, -1.0f));
    auto p = abcn(da, db, dc, n);
    ASSERT_EQ(rig.launch(fn, p, (n + 255) / 256, 1, 256, 1).status, VGPU_SUCCESS);
    auto c = download(dc, n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 1.5f * static_cast<float>(i)) << i;

    // A grid that covers only 512 threads leaves the rest untouched.
    upload(std::vector<float>(n, -1.0f), dc);
    ASSERT_EQ(rig.launch(fn, p, 2, 1, 256, 1).status, VGPU_SUCCESS);
    c = download(dc, n);
    EXPECT_EQ(c[511], 1.5f * 511);
    EXPECT_EQ(c[512], -1.0f);
}

TEST_F(VgpuKernels, MatmulMatchesReference) {
    uint64_t fn;
    rig.module_with("matmul", &fn);
    const uint32_t n = 40; // not a multiple of the 16x16 block
    std::vector<float> a(n * n), b(n * n), want(n * n, 0.0f);
    for (uint32_t i = 0; i < n * n; ++i) a[i] = static_cast<float>(i % 7) - 3, b[i] = static_cast<float>(i % 5) * 0.25f;
    for (uint32_t r = 0; r < n; ++r)
        for (uint32_t c = 0; c < n; ++c)
            for (uint32_t k = 0; k < n; ++k) want[r * n + c] += a[r * n + k] * b[k * n + c];
    const uint64_t da = upload(a), db = upload(b), dc = rig.alloc(n * n * 4);
    ASSERT_EQ(rig.launch(fn, abcn(da, db, dc, n), 3, 3, 16, 16).status, VGPU_SUCCESS);
    const auto got = download(dc, n * n);
    for (uint32_t i = 0; i < n * n; ++i) ASSERT_NEAR(got[i], want[i], 1e-3) << i;
}

TEST_F(VgpuKernels, EmptyKernelMangledNamesAndAsyncLaunch) {
    uint64_t fn;
    const uint64_t m = rig.module_with("empty_kernel", &fn);
    EXPECT_EQ(rig.launch(fn, {}, 1, 1, 1, 1).status, VGPU_SUCCESS);
    const std::string mangled = "_Z10vector_addPKfS0_Pfj";
    const Done f = rig.call({.opcode = VGPU_OP_MODULE_GET_FUNCTION,
                             .args = {m},
                             .payload = std::vector<uint8_t>(mangled.begin(), mangled.end())});
    EXPECT_EQ(f.status, VGPU_SUCCESS);
    // Asking again gives the same handle.
    const Done again = rig.call({.opcode = VGPU_OP_MODULE_GET_FUNCTION,
                                 .args = {m},
                                 .payload = std::vector<uint8_t>(mangled.begin(), mangled.end())});
    EXPECT_EQ(again.r0, f.r0);
    const Done s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {1}});
    ASSERT_EQ(s.status, VGPU_SUCCESS);
    Cmd async = rig.launch_cmd(fn, {}, {1, 1, 1}, {1, 1, 1}, s.r0);
    async.flags = VGPU_CMD_FLAG_ASYNC;
    EXPECT_EQ(rig.call(async).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s.r0}}).status, VGPU_SUCCESS);
}

// A lookup answers with the kernel's parameter layout too (its count and
// size, the descriptors in the payload), the same FUNC_GET_PARAM_INFO gives:
// a first launch then waits on one round trip.
TEST_F(VgpuKernels, AFunctionsLookupBringsItsParameterLayout) {
    uint64_t fn;
    const uint64_t m = rig.module_with("vector_add", &fn);
    const std::string name = "vector_add";
    const Done f = rig.call({.opcode = VGPU_OP_MODULE_GET_FUNCTION,
                             .args = {m},
                             .payload = std::vector<uint8_t>(name.begin(), name.end())});
    ASSERT_EQ(f.status, VGPU_SUCCESS);
    const Done info = rig.call({.opcode = VGPU_OP_FUNC_GET_PARAM_INFO, .args = {f.r0, 0}});
    ASSERT_EQ(info.status, VGPU_SUCCESS);
    ASSERT_EQ(info.r0, 4u); // vector_add(a, b, c, n)
    EXPECT_EQ(f.r1 & 0xffffffffu, info.r0);
    EXPECT_EQ(f.r1 >> 32, info.r1);
    EXPECT_EQ(std::vector<uint8_t>(f.payload.begin(), f.payload.begin() + info.r0 * sizeof(vgpu_param_desc)),
              std::vector<uint8_t>(info.payload.begin(), info.payload.begin() + info.r0 * sizeof(vgpu_param_desc)));
}

TEST_F(VgpuKernels, ModuleAndFunctionErrors) {
    uint64_t fn;
    const uint64_t m = rig.module_with("vector_add", &fn);
    auto get = [&](uint64_t mod, std::string name) {
        return rig.call({.opcode = VGPU_OP_MODULE_GET_FUNCTION,
                         .args = {mod},
                         .payload = std::vector<uint8_t>(name.begin(), name.end())})
            .status;
    };
    EXPECT_EQ(get(m, "no_such_kernel"), VGPU_ERROR_NOT_FOUND);
    EXPECT_EQ(get(m, ""), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(get(m, std::string("vector_add\0x", 12)), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(get(m + 1, "vector_add"), VGPU_ERROR_INVALID_HANDLE); // never issued
    EXPECT_EQ(get(fn, "vector_add"), VGPU_ERROR_INVALID_HANDLE);    // a function is not a module
    // Names past the payload (C++ templates' run to kilobytes) travel by address.
    auto get_far = [&](uint64_t bytes, uint64_t gpa) {
        return rig.call({.opcode = VGPU_OP_MODULE_GET_FUNCTION, .args = {m, bytes}, .payload = bytes_of(gpa)}).status;
    };
    const std::string long_name(3000, 'k');
    rig.put(kDataGpa, long_name.data(), long_name.size());
    EXPECT_EQ(get_far(long_name.size(), kDataGpa), VGPU_ERROR_NOT_FOUND); // reached the backend whole
    EXPECT_EQ(get_far(VGPU_PAYLOAD_BYTES, kDataGpa), VGPU_ERROR_INVALID_VALUE);      // would fit the payload
    EXPECT_EQ(get_far(VGPU_MAX_NAME_BYTES + 1, kDataGpa), VGPU_ERROR_INVALID_VALUE); // past the limit
    EXPECT_EQ(get_far(long_name.size(), 1ull << 50), VGPU_ERROR_INVALID_VALUE);      // outside RAM
    rig.put(kDataGpa + 100, "", 1);
    EXPECT_EQ(get_far(long_name.size(), kDataGpa), VGPU_ERROR_INVALID_VALUE); // a NUL inside
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kDataGpa, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kDataGpa, 4097}}).status, VGPU_ERROR_INVALID_VALUE);

    // Unloading frees the module and its functions; both handles go stale.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_UNLOAD, .args = {m}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_UNLOAD, .args = {m}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.launch(fn, {}, 1, 1, 1, 1).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(get(m, "vector_add"), VGPU_ERROR_INVALID_HANDLE);
}

// MODULE_FUNCTIONS lists a module's kernels as handles, the same ones
// MODULE_GET_FUNCTION gives, from any first one on.
TEST_F(VgpuKernels, ModuleFunctionsListsTheModulesKernels) {
    // A module naming two of the reference kernels (a word inside another is no name).
    static const char ptx[] = ".version 8.0\n.target sm_90\n.visible .entry vector_add(\n)\n{ ret; }\n"
                              ".visible .entry empty_kernel()\n{ ret; }\n// not_vector_add_at_all\n";
    uint64_t vector_add;
    const uint64_t m = rig.module_with("vector_add", &vector_add,
                                       {reinterpret_cast<const uint8_t*>(ptx), sizeof ptx - 1});
    const Done all = rig.call({.opcode = VGPU_OP_MODULE_FUNCTIONS, .args = {m, 0}});
    ASSERT_EQ(all.status, VGPU_SUCCESS);
    ASSERT_EQ(all.r0, 2u);
    EXPECT_EQ(all.r1, 2u); // the payload holds both
    std::vector<uint64_t> handles(all.r1);
    std::memcpy(handles.data(), all.payload.data(), handles.size() * sizeof(uint64_t));
    EXPECT_NE(std::find(handles.begin(), handles.end(), vector_add), handles.end());
    for (uint64_t h : handles)
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_GET_PARAM_INFO, .args = {h, 0}}).status, VGPU_SUCCESS);
    const Done rest = rig.call({.opcode = VGPU_OP_MODULE_FUNCTIONS, .args = {m, all.r0 - 1}});
    ASSERT_EQ(rest.status, VGPU_SUCCESS);
    EXPECT_EQ(rest.r1, 1u);
    uint64_t last = 0;
    std::memcpy(&last, rest.payload.data(), sizeof last);
    EXPECT_EQ(last, handles.back());
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_FUNCTIONS, .args = {m, all.r0}}).r1, 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_FUNCTIONS, .args = {m, all.r0 + 1}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_FUNCTIONS, .args = {vector_add, 0}}).status,
              VGPU_ERROR_INVALID_HANDLE);
}

TEST_F(VgpuKernels, LaunchShapeErrors) {
    uint64_t fn;
    rig.module_with("vector_add", &fn);
    const uint64_t d = rig.alloc(64);
    const Cmd good = rig.launch_cmd(fn, abcn(d, d, d, 16), {1, 1, 1}, {1, 1, 1});
    EXPECT_EQ(rig.call(good).status, VGPU_SUCCESS);
    Cmd zero_dim = good;
    zero_dim.args[2] = 0; // grid x and y
    EXPECT_EQ(rig.call(zero_dim).status, VGPU_ERROR_INVALID_VALUE);
    Cmd long_payload = good;
    long_payload.payload_len = VGPU_PAYLOAD_BYTES + 1;
    EXPECT_EQ(rig.call(long_payload).status, VGPU_ERROR_INVALID_VALUE);
    Cmd unknown_stream = good;
    unknown_stream.args[1] = 12345;
    EXPECT_EQ(rig.call(unknown_stream).status, VGPU_ERROR_INVALID_HANDLE);
    // Too many threads per block, as a GPU would refuse.
    EXPECT_EQ(rig.launch(fn, abcn(d, d, d, 16), 1, 1, 2048, 1).status, VGPU_ERROR_INVALID_VALUE);
}

// Blocks whose x*y*z wraps 64 bits to a small number were accepted before
// ((2^22, 2^22, 2^20) and (2^10, 2^27, 2^27)); every dimension is checked.
TEST_F(VgpuKernels, LaunchDimensionsCannotWrap) {
    uint64_t fn;
    rig.module_with("vector_add", &fn);
    const uint64_t d = rig.alloc(64);
    auto launch = [&](Dim3 g, Dim3 b) { return rig.call(rig.launch_cmd(fn, abcn(d, d, d, 16), g, b)).status; };
    EXPECT_EQ(launch({1, 1, 1}, {1u << 22, 1u << 22, 1u << 20}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(launch({1, 1, 1}, {1u << 10, 1u << 27, 1u << 27}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(launch({1, 1, 1}, {1, 1, 65}), VGPU_ERROR_INVALID_VALUE);      // z > 64
    EXPECT_EQ(launch({1, 1, 1}, {32, 32, 2}), VGPU_ERROR_INVALID_VALUE);     // 2048 threads
    EXPECT_EQ(launch({1u << 31, 1, 1}, {1, 1, 1}), VGPU_ERROR_INVALID_VALUE); // grid x >= 2^31
    EXPECT_EQ(launch({1, 65536, 1}, {1, 1, 1}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(launch({1, 1, 65536}, {1, 1, 1}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(launch({1, 1, 1}, {16, 8, 8}), VGPU_SUCCESS); // 1024 threads: the limit itself
    EXPECT_EQ(launch({0x7fffffffu, 65535, 65535}, {1, 1, 1}), VGPU_SUCCESS) << "the largest grid is legal";
}

TEST(LaunchLimits, EachDimensionBeforeAnyProduct) {
    EXPECT_FALSE(launch_dims_ok({1, 1, 1}, {1u << 22, 1u << 22, 1u << 20}));
    EXPECT_FALSE(launch_dims_ok({1, 1, 1}, {0xffffffffu, 0xffffffffu, 0xffffffffu}));
    EXPECT_TRUE(launch_dims_ok({1, 1, 1}, {1024, 1, 1}));
    EXPECT_TRUE(launch_dims_ok({1, 1, 1}, {1, 1024, 1}));
    EXPECT_FALSE(launch_dims_ok({1, 1, 1}, {1024, 2, 1}));
}

TEST_F(VgpuKernels, IllegalAddressIsStickyThenRecovered) {
    uint64_t fn;
    rig.module_with("vector_add", &fn);
    const uint64_t d = rig.alloc(256);
    const Done s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    // c runs past its allocation: the kernel faults like a GPU kernel would.
    EXPECT_EQ(rig.launch(fn, abcn(d, d, d + 128, 64), 1, 1, 64, 1).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(rig.dev->counters().recoveries, 1u);
    // Everything the VM held is gone, and the device still works.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s.r0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.launch(fn, {}, 1, 1, 1, 1).status, VGPU_ERROR_INVALID_HANDLE);
    uint64_t fn2;
    rig.module_with("vector_add", &fn2);
    const uint64_t a = upload({1, 2, 3, 4}), b = upload({10, 20, 30, 40}), c = rig.alloc(16);
    ASSERT_EQ(rig.launch(fn2, abcn(a, b, c, 4), 1, 1, 4, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(download(c, 4), (std::vector<float>{11, 22, 33, 44}));
    // A kernel pointer that is not device memory at all faults too.
    EXPECT_EQ(rig.launch(fn2, abcn(reinterpret_cast<uint64_t>(&fn2), b, c, 4), 1, 1, 4, 1).status,
              VGPU_ERROR_ILLEGAL_ADDRESS);
}

// The host backend finishes work in the call that queues it: queries say
// done, waits have nothing to wait for; handles and flags are checked.
// As a GPU without the opt-in attribute: at most 48 KiB of dynamic shared memory.
TEST_F(VgpuKernels, SharedMemoryBeyondTheDefaultLimitIsRefused) {
    uint64_t fn;
    rig.module_with("empty_kernel", &fn);
    auto with_shared = [&](uint64_t bytes) {
        return rig.call({.opcode = VGPU_OP_LAUNCH_KERNEL_PACKED,
                         .args = {fn, 0, 1 | (1ull << 32), 1 | (1ull << 32), 1 | (1ull << 32), bytes}})
            .status;
    };
    EXPECT_EQ(with_shared(48 << 10), VGPU_SUCCESS);
    EXPECT_EQ(with_shared((48 << 10) + 1), VGPU_ERROR_INVALID_VALUE);
}

// cuFuncGetAttribute/cuFuncSetAttribute: raising a kernel's dynamic shared
// memory past 48 KiB lets its launches ask for it; the rest is refused.
TEST_F(VgpuKernels, FunctionAttributes) {
    uint64_t fn;
    rig.module_with("empty_kernel", &fn);
    const Done threads = rig.call({.opcode = VGPU_OP_FUNC_GET_ATTRIBUTE, .args = {fn, 0}});
    ASSERT_EQ(threads.status, VGPU_SUCCESS);
    EXPECT_EQ(threads.r0, 1024u);
    auto launch_with = [&](uint64_t shared) {
        return rig.call({.opcode = VGPU_OP_LAUNCH_KERNEL_PACKED,
                         .args = {fn, 0, 1 | (1ull << 32), 1 | (1ull << 32), 1 | (1ull << 32), shared}})
            .status;
    };
    EXPECT_EQ(launch_with(64 << 10), VGPU_ERROR_INVALID_VALUE);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_FUNC_SET_ATTRIBUTE, .args = {fn, 8, 64 << 10}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_GET_ATTRIBUTE, .args = {fn, 8}}).r0, 64u << 10);
    EXPECT_EQ(launch_with(64 << 10), VGPU_SUCCESS);
    EXPECT_EQ(launch_with((64 << 10) + 1), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_SET_ATTRIBUTE, .args = {fn, 8, 1ull << 40}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_SET_ATTRIBUTE, .args = {fn, 4, 8}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_GET_ATTRIBUTE, .args = {fn, 1u << 20}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_GET_ATTRIBUTE, .args = {fn ^ (1ull << 32), 0}}).status,
              VGPU_ERROR_INVALID_HANDLE);
}

TEST_F(VgpuKernels, QueriesAndStreamWaits) {
    const uint64_t s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    const uint64_t e = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).r0;
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {e, s}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {s}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {e}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {0, e, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s, e, 1}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s, s, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_QUERY, .args = {e}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {s}}).status, VGPU_ERROR_INVALID_HANDLE);
}

TEST_F(VgpuKernels, StreamsAndEvents) {
    const Done s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const Done e0 = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    const Done e1 = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    ASSERT_EQ(s.status | e0.status | e1.status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_ELAPSED_TIME, .args = {e0.r0, e1.r0}}).status,
              VGPU_ERROR_INVALID_HANDLE); // not recorded yet
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {e0.r0, s.r0}}).status, VGPU_SUCCESS);
    rig.alloc(1 << 16);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {e1.r0, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_SYNCHRONIZE, .args = {e1.r0}}).status, VGPU_SUCCESS);
    const Done t = rig.call({.opcode = VGPU_OP_EVENT_ELAPSED_TIME, .args = {e0.r0, e1.r0}});
    ASSERT_EQ(t.status, VGPU_SUCCESS);
    float ms;
    const uint32_t bits = static_cast<uint32_t>(t.r0);
    std::memcpy(&ms, &bits, 4);
    EXPECT_GE(ms, 0.0f);
    EXPECT_LT(ms, 10000.0f);
    // A stream handle is not an event handle, and freed handles go stale.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {s.r0, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_DESTROY, .args = {e0.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_DESTROY, .args = {e0.r0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_DESTROY, .args = {s.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s.r0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_DESTROY, .args = {0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {2}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {4}}).status, VGPU_ERROR_INVALID_VALUE); // interprocess
}

TEST_F(VgpuKernels, HandleTablesAreBounded) {
    for (int i = 0; i < 8; ++i) ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).status, VGPU_ERROR_OUT_OF_MEMORY);
}

TEST_F(VgpuKernels, DeviceQueries) {
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_INIT}).r0, VGPU_BACKEND_HOST);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_COUNT}).r0, 1u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {10, 0}}).r0, 32u); // warp size
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {10, 1}}).status, VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {1ull << 40, 0}}).status,
              VGPU_ERROR_INVALID_VALUE);
    // Every attribute CUDA 13 names has an answer (a program that only asks
    // runs on), COMPUTE_MODE (20) the default mode; numbers past the last refused.
    for (uint64_t a = 1; a < 148; ++a)
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {a, 0}}).status, VGPU_SUCCESS) << a;
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {20, 0}}).r0, 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {148, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {0, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    const Done name = rig.call({.opcode = VGPU_OP_DEVICE_GET_NAME, .args = {0}});
    ASSERT_EQ(name.status, VGPU_SUCCESS);
    const std::string s(reinterpret_cast<const char*>(name.payload.data()));
    EXPECT_EQ(s.size(), name.r0);
    EXPECT_NE(s.find("not a GPU"), std::string::npos);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_TOTAL_MEM, .args = {0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
}

TEST_F(VgpuKernels, UnknownOpcodesAndFlags) {
    for (uint16_t op : {uint16_t{7}, uint16_t{9}, uint16_t{27}, uint16_t{29}, uint16_t{56}, uint16_t{VGPU_OP_MAX_}, uint16_t{0xFFFF}})
        EXPECT_EQ(rig.call({.opcode = op}).status, VGPU_ERROR_NOT_SUPPORTED) << op;
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP, .flags = 0x8000}).status, VGPU_ERROR_INVALID_VALUE);
    // The cooperative flag belongs to launches only.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP, .flags = VGPU_CMD_FLAG_COOPERATIVE}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP, .payload_len = 100000}).status, VGPU_ERROR_INVALID_VALUE);
    const auto c = rig.dev->counters();
    EXPECT_EQ(c.bad_opcodes, 7u);
    EXPECT_EQ(c.errors, 10u);
    // The device goes on working.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test
