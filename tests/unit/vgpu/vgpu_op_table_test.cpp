// The opcode table (kvmtool-gpu/abi/vgpu_ops.h) held against the ABI's
// recorded layout and against what the dispatch does with each opcode:
// the numbers it knows, the commands it refuses without a context, and the
// commands that move the VM's device-memory quota.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>
#include <set>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_abi_layout.h"
#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"
#include "memmap/backing.h"
#include "memmap/guest_memory.h"
#include "tests/support/host_module_image.h"

namespace kvmgpu::vgpu {
namespace {

using abi::kVgpuOps;

TEST(VgpuOpTable, LayoutIsTheOneRecordedForThisVersion) {
    const uint64_t now = abi::vgpu_abi_layout_hash();
    EXPECT_EQ(now, VGPU_ABI_LAYOUT_HASH) << std::hex << "the vGPU ABI's layout changed (now 0x" << now
                                         << "): bump VGPU_ABI_VERSION and record the new hash beside it";
}

TEST(VgpuOpTable, NamesAndFactsComeFromTheTable) {
    EXPECT_STREQ(vgpu_op_name(VGPU_OP_MEM_ALLOC), "MEM_ALLOC");
    EXPECT_STREQ(vgpu_op_name(VGPU_OP_FFT_SET_WORK_AREA), "FFT_SET_WORK_AREA");
    EXPECT_EQ(vgpu_op_name(33), nullptr); // retired
    EXPECT_EQ(vgpu_op_name(VGPU_OP_MAX_), nullptr);
    EXPECT_EQ(vgpu_op_flags(VGPU_OP_LAUNCH_KERNEL_PACKED) & (VGPU_OPF_ASYNC | VGPU_OPF_COOP),
              VGPU_OPF_ASYNC | VGPU_OPF_COOP);
    static_assert(sizeof(vgpu_launch_args) == sizeof(vgpu_command::arg)); // grid and block typed, no halves by hand
    for (const abi::VgpuOpRow& r : kVgpuOps) {
        EXPECT_STREQ(vgpu_op_name(r.number), r.name);
        EXPECT_EQ(vgpu_op_flags(r.number), r.flags) << r.name;
    }
}

// A dispatch over the host backend in 2 MiB of guest RAM, driven directly.
struct Rig {
    memmap::GuestMemory mem;
    DeviceBackends devices;
    VgpuCounters counters;
    std::unique_ptr<CommandDispatch> dispatch;
    static constexpr uint64_t kRam = 2ull << 20, kData = 64 << 10;

    Rig() {
        mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
        auto backend = make_host_backend(HostBackendOptions{.total_bytes = 256ull << 20, .bounce_bytes = 4096});
        backend->register_guest_ram(ram(), kRam);
        devices = DeviceBackends(std::move(backend));
        const VgpuOptions opts{.device_mem_quota = 128ull << 20, .max_handles = 64, .max_module_bytes = 64 << 10,
                               .log_per_second = 0};
        dispatch = std::make_unique<CommandDispatch>(mem, devices, opts, counters, 1);
        dispatch->refresh_ram_windows();
    }
    uint8_t* ram() { return mem.regions().front().backing->data(); }
    CommandResult exec(uint16_t op, std::initializer_list<uint64_t> args = {}) {
        GuestCommand c{};
        c.desc.opcode = op;
        size_t i = 0;
        for (uint64_t a : args) c.desc.arg[i++] = a;
        return dispatch->execute(c);
    }
};

TEST(VgpuOpTable, TheDispatchKnowsExactlyTheTablesOpcodes) {
    Rig rig;
    for (uint32_t op = 0; op <= 0xFFFF; ++op) {
        const uint64_t before = rig.counters.bad_opcodes;
        const CommandResult r = rig.exec(static_cast<uint16_t>(op));
        const bool refused = rig.counters.bad_opcodes != before;
        ASSERT_EQ(refused, vgpu_op_name(op) == nullptr) << "opcode " << op;
        if (refused) {
            ASSERT_EQ(r.status, VGPU_ERROR_NOT_SUPPORTED);
        }
        if (op == VGPU_OP_CTX_SET_CURRENT || op == VGPU_OP_PRIMARY_CTX_RESET) rig.exec(VGPU_OP_CTX_SET_CURRENT, {0});
    }
}

TEST(VgpuOpTable, WithoutAContextExactlyTheCtxOpcodesAreRefused) {
    Rig rig;
    ASSERT_EQ(rig.exec(VGPU_OP_CTX_SET_CURRENT, {0}).status, VGPU_SUCCESS);
    const auto& ran = rig.counters.per_opcode;
    for (const abi::VgpuOpRow& r : kVgpuOps) { // the ones that need one first: nothing makes one current
        if (!(r.flags & VGPU_OPF_CTX)) continue;
        const uint64_t before = ran[r.number];
        EXPECT_EQ(rig.exec(r.number).status, VGPU_ERROR_INVALID_CONTEXT) << r.name;
        EXPECT_EQ(ran[r.number], before) << r.name << ": its handler ran";
    }
    for (const abi::VgpuOpRow& r : kVgpuOps) {
        if (r.flags & VGPU_OPF_CTX) continue;
        const uint64_t before = ran[r.number];
        rig.exec(r.number);
        EXPECT_EQ(ran[r.number], before + 1) << r.name << ": refused before its handler";
        rig.exec(VGPU_OP_CTX_SET_CURRENT, {0}); // CTX_CREATE made one current
    }
}

// Random commands with plausible arguments (the VM's own handles and
// addresses, sizes, small numbers): the quota may grow only in an opcode
// marked TAKES_QUOTA and shrink only in one marked GIVES_QUOTA.
TEST(VgpuOpTable, OnlyTheMarkedOpcodesMoveTheQuota) {
    Rig rig;
    std::memcpy(rig.ram() + Rig::kData, test::kHostModulePtx, test::kHostModulePtxBytes);
    std::vector<uint64_t> known = {0, 1, 2, 3, 16, 64, 100, 201, 0x29, 4096, 64 << 10, 2 << 20, Rig::kData,
                                   test::kHostModulePtxBytes};
    auto keep = [&](const CommandResult& r) {
        if (r.status == VGPU_SUCCESS)
            for (uint64_t v : r.result)
                if (v) known.push_back(v);
    };
    const size_t fixed = known.size();
    std::mt19937_64 rng(30);
    std::set<std::string> grew, shrank;
    for (int i = 0; i < 200000; ++i) {
        if (i % 1000 == 0) { // a fresh VM now and then: quota and handles run out
            rig.dispatch->reset();
            known.resize(fixed);
            keep(rig.exec(VGPU_OP_MODULE_LOAD_DATA, {Rig::kData, test::kHostModulePtxBytes}));
            keep(rig.exec(VGPU_OP_GUEST_RAM_DEVICE_PTR, {Rig::kData, 64 << 10}));
        }
        const abi::VgpuOpRow& row = kVgpuOps[rng() % std::size(kVgpuOps)];
        GuestCommand c{};
        c.desc.opcode = row.number;
        for (uint64_t& a : c.desc.arg) a = rng() % 4 ? known[rng() % known.size()] : rng() % 8;
        const uint64_t used = rig.dispatch->allocations().used(), recoveries = rig.counters.recoveries;
        keep(rig.dispatch->execute(c));
        if (rig.counters.recoveries != recoveries) continue; // a sticky error drops everything, whatever the opcode
        const uint64_t now = rig.dispatch->allocations().used();
        if (now > used) {
            grew.insert(row.name);
            EXPECT_TRUE(row.flags & VGPU_OPF_TAKES_QUOTA) << row.name << " took quota";
        } else if (now < used) {
            shrank.insert(row.name);
            EXPECT_TRUE(row.flags & VGPU_OPF_GIVES_QUOTA) << row.name << " gave quota back";
        }
    }
    std::printf("took quota:");
    for (const std::string& n : grew) std::printf(" %s", n.c_str());
    std::printf("\ngave it back:");
    for (const std::string& n : shrank) std::printf(" %s", n.c_str());
    std::printf("\n");
    EXPECT_TRUE(grew.count("MEM_ALLOC") && grew.count("VMM_CREATE")); // the run reached the quota at all
    EXPECT_TRUE(shrank.count("MEM_FREE"));
}

} // namespace
} // namespace kvmgpu::vgpu
