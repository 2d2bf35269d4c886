// Contexts in the device model: the current context, objects scoped to the
// context they were made in, what destroying or releasing a context frees,
// primary contexts, peer copies, and the start state after RESET.
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

struct VgpuContexts : ::testing::Test {
    VgpuRig rig{VgpuOptions{.max_handles = 8, .max_module_bytes = 4096}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }

    uint32_t status(Cmd c) { return rig.call(std::move(c)).status; }
    uint64_t create(uint64_t flags = 0, uint64_t device = 0) {
        const Done d = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {flags, device}});
        EXPECT_EQ(d.status, VGPU_SUCCESS);
        return d.r0;
    }
    uint32_t set_current(uint64_t ctx) { return status({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {ctx}}); }
};

TEST_F(VgpuContexts, AVmStartsInDeviceZerosPrimaryContext) {
    const uint64_t d = rig.alloc(4096); // no context named: the primary one
    const Done retained = rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}});
    ASSERT_EQ(retained.status, VGPU_SUCCESS);
    EXPECT_EQ(retained.r1, 1u);
    EXPECT_EQ(retained.r0 >> 56, 0x43u); // a context handle
    // Its last release frees what was made in it, the start allocation too.
    const Done released = rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RELEASE, .args = {0}});
    EXPECT_EQ(released.status, VGPU_SUCCESS);
    EXPECT_EQ(released.r0, 0u);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEM_FREE, .args = {d}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.host->live_allocations(), 0u);
}

TEST_F(VgpuContexts, WithNoCurrentContextOnlyDeviceAndContextCommandsWork) {
    ASSERT_EQ(set_current(0), VGPU_SUCCESS);
    for (uint16_t op : {VGPU_OP_MEM_ALLOC, VGPU_OP_MEM_GET_INFO, VGPU_OP_STREAM_CREATE, VGPU_OP_EVENT_CREATE,
                        VGPU_OP_MODULE_LOAD_DATA, VGPU_OP_CTX_SYNCHRONIZE, VGPU_OP_MEMCPY_PEER})
        EXPECT_EQ(status({.opcode = op, .args = {4096}}), VGPU_ERROR_INVALID_CONTEXT) << op;
    EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_GET_COUNT}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_NOP}), VGPU_SUCCESS);
    const uint64_t c = create();
    EXPECT_NE(rig.alloc(64), 0u); // the created context is current
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_DESTROY, .args = {c}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEM_ALLOC, .args = {64}}), VGPU_ERROR_INVALID_CONTEXT); // it was current
}

TEST_F(VgpuContexts, ObjectsBelongToTheirContext) {
    const uint64_t a = create(), stream_a = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    uint64_t fn_a;
    const uint64_t mod_a = rig.module_with("vector_add", &fn_a);
    const uint64_t event_a = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).r0;
    const uint64_t mem_a = rig.alloc(4096);
    const uint64_t b = create();
    EXPECT_EQ(status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {stream_a}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status({.opcode = VGPU_OP_EVENT_QUERY, .args = {event_a}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status({.opcode = VGPU_OP_FUNC_GET_ATTRIBUTE, .args = {fn_a, 0}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status({.opcode = VGPU_OP_MODULE_UNLOAD, .args = {mod_a}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status({.opcode = VGPU_OP_STREAM_DESTROY, .args = {stream_a}}), VGPU_ERROR_INVALID_HANDLE);
    // Device memory is the VM's in every context (unified addressing).
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMSET_D8, .args = {mem_a, 1, 4096, 0}}), VGPU_SUCCESS);
    ASSERT_EQ(set_current(a), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {stream_a}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_FUNC_GET_ATTRIBUTE, .args = {fn_a, 0}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {b ^ (1ull << 32)}}), VGPU_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {stream_a}}), VGPU_ERROR_INVALID_CONTEXT);
}

TEST_F(VgpuContexts, DestroyingAContextFreesWhatItMade) {
    const uint64_t keep = create();
    const uint64_t kept_mem = rig.alloc(4096);
    const uint64_t doomed = create();
    const uint64_t stream = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    uint64_t fn;
    rig.module_with("vector_add", &fn);
    const uint64_t mem = rig.alloc(8192);
    const size_t live_before = rig.host->live_allocations();
    ASSERT_EQ(set_current(keep), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_DESTROY, .args = {doomed}}), VGPU_SUCCESS);
    EXPECT_EQ(rig.host->live_allocations(), live_before - 1);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEM_FREE, .args = {mem}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEM_FREE, .args = {kept_mem}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_DESTROY, .args = {doomed}}), VGPU_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(set_current(doomed), VGPU_ERROR_INVALID_CONTEXT);
    // Its handles stay dead in any context.
    EXPECT_EQ(status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {stream}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status({.opcode = VGPU_OP_FUNC_GET_ATTRIBUTE, .args = {fn, 0}}), VGPU_ERROR_INVALID_HANDLE);
    // Its quota came back: the table of 8 is not held by the dead context.
    for (int i = 0; i < 8; ++i) EXPECT_NE(rig.alloc(64), 0u) << i;
}

TEST_F(VgpuContexts, PrimaryContextsAreRetainedReleasedResetAndNeverDestroyed) {
    EXPECT_EQ(status({.opcode = VGPU_OP_PRIMARY_CTX_RELEASE, .args = {0}}), VGPU_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(status({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {1}}), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(status({.opcode = VGPU_OP_PRIMARY_CTX_SET_FLAGS, .args = {0, 3}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status({.opcode = VGPU_OP_PRIMARY_CTX_SET_FLAGS, .args = {0, 4}}), VGPU_SUCCESS);
    const uint64_t p = rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}}).r0;
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}}).r0, p); // one per device
    const Done state = rig.call({.opcode = VGPU_OP_PRIMARY_CTX_STATE, .args = {0}});
    EXPECT_EQ(state.r0, 4u);
    EXPECT_EQ(state.r1, 1u);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_DESTROY, .args = {p}}), VGPU_ERROR_INVALID_CONTEXT);
    ASSERT_EQ(set_current(p), VGPU_SUCCESS);
    const uint64_t mem = rig.alloc(4096);
    EXPECT_EQ(status({.opcode = VGPU_OP_PRIMARY_CTX_RESET, .args = {0}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEM_FREE, .args = {mem}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_PRIMARY_CTX_STATE, .args = {0}}).r0, 0u); // flags back to 0
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RELEASE, .args = {0}}).r0, 1u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RELEASE, .args = {0}}).r0, 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_PRIMARY_CTX_STATE, .args = {0}}).r1, 0u);
    EXPECT_NE(rig.alloc(64), 0u); // still current: released is not destroyed
}

TEST_F(VgpuContexts, CreateRefusesBadFlagsAndDevicesAndFillsUp) {
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_CREATE, .args = {0x20, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_CREATE, .args = {3, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 1}}), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_CREATE, .args = {0, ~0ull}}), VGPU_ERROR_INVALID_DEVICE);
    for (int i = 0; i < 7; ++i) create(); // 8 handles: the primary holds one
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}}), VGPU_ERROR_OUT_OF_MEMORY);
}

TEST_F(VgpuContexts, PeerCopiesCheckBothContextsAndBothRanges) {
    const uint64_t a = create(), mem_a = rig.alloc(4096);
    const uint64_t b = create(), mem_b = rig.alloc(4096);
    ASSERT_EQ(status({.opcode = VGPU_OP_MEMSET_D8, .args = {mem_a, 9, 4096, 0}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {mem_b, b, mem_a, a, 4096, 0}}), VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, mem_b, 4096, 0}}).status, VGPU_SUCCESS);
    uint8_t got[4096];
    rig.get(kDataGpa, got, sizeof got);
    EXPECT_EQ(got[0], 9);
    EXPECT_EQ(got[4095], 9);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {mem_b, 0, mem_a, a, 16, 0}}), VGPU_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {mem_b, b, mem_a, mem_a, 16, 0}}),
              VGPU_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {mem_b, b, mem_a, a, 4097, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {mem_b, b, kDataGpa, a, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {mem_b, b, mem_a, a, 16, 12345}}),
              VGPU_ERROR_INVALID_HANDLE);
}

TEST_F(VgpuContexts, ResetRestoresTheStartState) {
    create();
    ASSERT_EQ(set_current(0), VGPU_SUCCESS);
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_NE(rig.alloc(64), 0u); // device 0's primary context is current again
}

TEST_F(VgpuContexts, TheHostBackendHasNoDeviceVariables) {
    uint64_t fn;
    const uint64_t mod = rig.module_with("vector_add", &fn);
    const std::string name = "kvmgpu_scale";
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_GET_GLOBAL, .args = {mod}, .payload = {name.begin(), name.end()}}).status,
              VGPU_ERROR_NOT_FOUND);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_GET_GLOBAL, .args = {mod}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_GET_GLOBAL, .args = {mod ^ 1}, .payload = {name.begin(), name.end()}})
                  .status,
              VGPU_ERROR_INVALID_HANDLE);
}

} // namespace
} // namespace kvmgpu::vgpu::test
