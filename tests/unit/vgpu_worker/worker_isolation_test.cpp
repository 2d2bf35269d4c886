// Several VMs in one VMM process, each with its GPU worker: a worker's
// address space holds its own VM's guest RAM, channel and counters, and
// nothing of the VMs built before or after it; a replacement worker, forked
// once every VM exists, the same. What a compromised worker could read
// without a system call is what this checks.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu_worker/foreign_mappings.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

struct Mapping {
    uint64_t inode;
    std::string path;
};

std::vector<Mapping> maps_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
    std::vector<Mapping> out;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string range, perms, offset, dev, path;
        uint64_t inode = 0;
        fields >> range >> perms >> offset >> dev >> inode;
        std::getline(fields >> std::ws, path);
        out.push_back({inode, path});
    }
    return out;
}

uint64_t inode_of(int fd) {
    struct stat st {};
    EXPECT_EQ(fstat(fd, &st), 0);
    return st.st_ino;
}

int count_named(const std::vector<Mapping>& maps, const std::string& prefix) {
    int n = 0;
    for (const Mapping& m : maps) n += m.path.starts_with(prefix);
    return n;
}

// Worker `k` of `vms` maps VM k's RAM and no other VM's, one channel and one
// set of counters.
void expect_only_its_own(const std::vector<std::unique_ptr<WorkerVgpu>>& vms, size_t k) {
    const pid_t pid = vms[k]->worker->worker_pid();
    ASSERT_GT(pid, 0);
    const auto maps = maps_of(pid);
    ASSERT_FALSE(maps.empty()) << "cannot read worker " << pid << "'s maps";
    std::set<uint64_t> inodes;
    for (const Mapping& m : maps) inodes.insert(m.inode);
    for (size_t j = 0; j < vms.size(); ++j) {
        const uint64_t ram = inode_of(vms[j]->rig.mem.regions()[0].backing->fd());
        if (j == k) EXPECT_TRUE(inodes.count(ram)) << "worker of VM " << k << " lacks its own RAM";
        else EXPECT_FALSE(inodes.count(ram)) << "worker of VM " << k << " maps the RAM of VM " << j;
    }
    EXPECT_EQ(count_named(maps, "/memfd:kvmgpu-worker-channel"), 1) << "worker of VM " << k;
    EXPECT_EQ(count_named(maps, "/memfd:kvmgpu-vgpu-counters"), 1) << "worker of VM " << k;
}

TEST(WorkerIsolation, EachWorkerMapsItsOwnVmAndNoOther) {
    std::vector<std::unique_ptr<WorkerVgpu>> vms;
    for (int i = 0; i < 3; ++i) vms.push_back(std::make_unique<WorkerVgpu>());
    for (size_t k = 0; k < vms.size(); ++k) {
        ASSERT_TRUE(vms[k]->worker) << "VM " << k << " has no worker engine";
        ASSERT_NO_FATAL_FAILURE(expect_only_its_own(vms, k));
    }
    // The first VM's worker is lost under a command; its replacement is
    // forked now that every VM's RAM exists in the VMM.
    VgpuRig& rig = vms[0]->rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const pid_t old = vms[0]->worker->worker_pid();
    ASSERT_GT(old, 0) << "no worker to lose"; // never kill(-1)
    ASSERT_EQ(kill(old, SIGKILL), 0);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_INIT}).status, kWorkerDied);
    ASSERT_TRUE(new_worker_within_bound(*vms[0]->worker, old));
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_INIT}).status, VGPU_SUCCESS);
    expect_only_its_own(vms, 0);
    EXPECT_GE(vms[0]->worker->replacements(), 1u);
}

TEST(WorkerIsolation, TheCheckFindsAnotherVmsMemory) {
    // This process holds a VM's RAM, channel-like memory and counters: with
    // none of them named as its own, the worker's check names one.
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    const auto found = foreign_vm_mapping({});
    ASSERT_TRUE(found.has_value());
    EXPECT_NE(found->find("kvmgpu-"), std::string::npos) << *found;
    // Named as its own, the RAM is no longer foreign: nothing else of a VM
    // lives in this process now.
    const memmap::Region& r = mem.regions()[0];
    const memmap::ForkShare own[] = {{r.backing->data(), r.size(), r.backing->fd()}};
    const auto again = foreign_vm_mapping(own);
    EXPECT_FALSE(again.has_value()) << *again;
}

} // namespace
} // namespace kvmgpu::vgpu::test
