// Fault containment under MPS without a GPU: the workers of several VMs on
// one MpsServerGroup (host backend), one of which loses its context to a
// sticky error as CUDA does. Every worker of the server is replaced, idle
// or not; an affected command in hand fails with the fault's status; the
// other VMs work afterwards on fresh workers; a VM outside the group is
// untouched. And the group's own rules: one fault per generation, no new
// client while an affected one lives.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu_worker/mps_server_group.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

bool process_gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

constexpr const char* kVar = "KVMGPU_TEST_MPS_PIPE";

// The host backend, made only where the worker has the group's client
// variable (as CUDA finds its MPS pipe directory in the environment).
DeviceBackends make_client_backend(const std::string&, std::string* why) {
    const char* v = std::getenv(kVar);
    if (!v || std::string(v) != "/pipe") {
        *why = "the worker has no MPS client environment";
        return {};
    }
    return make_host_backend(HostBackendOptions{.bounce_bytes = 8192});
}
BackendFactory client_factory() { return {&make_client_backend, ""}; }

std::shared_ptr<MpsServerGroup> group() { return std::make_shared<MpsServerGroup>(EnvList{{kVar, "/pipe"}}); }

TEST(MpsServerGroup, OneFaultPerGenerationAndNoNewClientWhileAnAffectedOneLives) {
    MpsServerGroup g({{kVar, "/pipe"}}, 50ms);
    EXPECT_EQ(g.generation(), 0u);
    EXPECT_FALSE(g.recovering());
    g.worker_started(0);
    g.worker_started(0);
    EXPECT_TRUE(g.may_start());
    EXPECT_TRUE(g.report_fault(0, VGPU_ERROR_ILLEGAL_ADDRESS));
    // The other client fails on the same fault: no second recovery.
    EXPECT_FALSE(g.report_fault(0, VGPU_ERROR_LAUNCH_FAILED));
    EXPECT_EQ(g.faults(), 1u);
    EXPECT_EQ(g.fault_status(), VGPU_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(g.generation(), 1u);
    EXPECT_FALSE(g.may_start());
    EXPECT_TRUE(g.recovering());
    g.worker_ended(0);
    EXPECT_FALSE(g.may_start()) << "one affected client still lives";
    g.worker_ended(0);
    EXPECT_TRUE(g.may_start());
    g.worker_started(1);
    std::this_thread::sleep_for(60ms);
    EXPECT_FALSE(g.recovering()) << "recovered, and past the bound";
    EXPECT_TRUE(g.report_fault(1, VGPU_ERROR_ILLEGAL_ADDRESS));
    EXPECT_EQ(g.faults(), 2u);
    EXPECT_EQ(g.client_env(), (EnvList{{kVar, "/pipe"}}));
    g.stop("the daemon is gone");
    EXPECT_FALSE(g.may_start());
    EXPECT_EQ(g.lost_reason(), "the daemon is gone");
}

TEST(MpsServerGroup, AFatalFaultReplacesEveryWorkerOfTheServer) {
    auto g = group();
    WorkerVgpu faulty(WorkerOptions{.mps = g}, VgpuOptions{}, factory_of<UnrecoverableBackend>());
    WorkerVgpu other(WorkerOptions{.mps = g}, VgpuOptions{}, client_factory());
    WorkerVgpu outside; // contexts: its own process, no group
    for (VgpuRig* r : {&faulty.rig, &other.rig, &outside.rig}) ASSERT_EQ(r->enable(), VGPU_SUCCESS);
    const uint64_t held = other.rig.alloc(4096); // asserts: the worker had the client environment
    const uint64_t outside_held = outside.rig.alloc(4096);
    const pid_t other_pid = other.worker->worker_pid(), outside_pid = outside.worker->worker_pid();

    const uint64_t d = faulty.rig.alloc(4096);
    EXPECT_EQ(faulty.rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 1, 16, 0}}).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    // The other VM did nothing: its idle worker is replaced all the same.
    ASSERT_TRUE(new_worker_within_bound(*other.worker, other_pid)) << "the idle client was not replaced";
    EXPECT_TRUE(process_gone(other_pid));
    EXPECT_EQ(g->faults(), 1u);
    EXPECT_EQ(other.rig.dev->counters().recoveries, 1u);
    EXPECT_EQ(other.rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {held}}).status, VGPU_ERROR_INVALID_VALUE)
        << "the old worker's objects are gone with it";
    // It goes on: a new allocation, a copy through it, a synchronize.
    const uint64_t again = other.rig.alloc(4096);
    EXPECT_EQ(other.rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {again, 7, 4096, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(other.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
    // The VM outside the server never noticed.
    EXPECT_EQ(outside.worker->worker_pid(), outside_pid);
    EXPECT_EQ(outside.rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {outside_held}}).status, VGPU_SUCCESS);
    EXPECT_EQ(outside.rig.dev->counters().recoveries, 0u);
}

TEST(MpsServerGroup, AnAffectedCommandInHandFailsWithTheFaultsStatus) {
    auto g = group();
    WorkerFaults& faults = shared_faults();
    WorkerVgpu faulty(WorkerOptions{.mps = g}, VgpuOptions{}, factory_of<UnrecoverableBackend>());
    WorkerVgpu busy(WorkerOptions{.call_timeout = 3600s, .mps = g}, VgpuOptions{}, faulty_factory(faults));
    ASSERT_EQ(faulty.rig.enable(), VGPU_SUCCESS);
    ASSERT_EQ(busy.rig.enable(), VGPU_SUCCESS);
    const pid_t busy_pid = busy.worker->worker_pid();
    faults.arm(WorkerFaults::Hang); // its synchronize never returns (blocked in a dead server)
    const uint64_t seq = busy.rig.post({.opcode = VGPU_OP_CTX_SYNCHRONIZE});
    busy.rig.doorbell();
    const uint64_t d = faulty.rig.alloc(4096);
    EXPECT_EQ(faulty.rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 1, 16, 0}}).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    // Not the hour-long bound: the fault's own status, at the next look.
    EXPECT_EQ(busy.rig.wait(seq).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    EXPECT_TRUE(process_gone(busy_pid));
    EXPECT_EQ(busy.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
    EXPECT_NE(busy.worker->worker_pid(), busy_pid);
    EXPECT_EQ(faulty.rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
}

// Whether the last worker to make its backend had the client variable: in
// MAP_SHARED memory made before main (so before the worker zygote), so the
// test sees what the worker saw.
class EnvSeen {
public:
    EnvSeen() {
        void* p = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("mmap");
        seen_ = new (p) std::atomic<int>(-1);
    }
    int last() const { return seen_->load(); }
    static BackendFactory factory();

private:
    static DeviceBackends make(const std::string&, std::string*);
    std::atomic<int>* seen_;
};
EnvSeen g_env_seen;

DeviceBackends EnvSeen::make(const std::string&, std::string*) {
    g_env_seen.seen_->store(std::getenv(kVar) ? 1 : 0);
    return make_host_backend(HostBackendOptions{.bounce_bytes = 8192});
}
BackendFactory EnvSeen::factory() { return {&EnvSeen::make, ""}; }

TEST(MpsServerGroup, AfterAFallBackNewWorkersGetNoMpsVariables) {
    auto g = group();
    EnvSeen& env = g_env_seen;
    WorkerVgpu vm(WorkerOptions{.mps = g}, VgpuOptions{}, EnvSeen::factory());
    ASSERT_EQ(vm.rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(env.last(), 1);
    const uint64_t held = vm.rig.alloc(4096);
    const pid_t pid = vm.worker->worker_pid();
    g->fall_back_to_contexts("the daemon is gone");
    ASSERT_TRUE(new_worker_within_bound(*vm.worker, pid)) << "the MPS client was not replaced";
    EXPECT_TRUE(process_gone(pid));
    EXPECT_EQ(vm.rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {held}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_NE(vm.rig.alloc(4096), 0u);
    EXPECT_EQ(env.last(), 0) << "the replacement still had the MPS client's variables";
}

TEST(MpsServerGroup, AfterAStopCommandsFailRatherThanWait) {
    auto g = group();
    // An hour's call bound: failing "within the supervisor's looks" is then
    // told from waiting for the bound with a hang guard far below it.
    WorkerVgpu vm(WorkerOptions{.call_timeout = 3600s, .mps = g}, VgpuOptions{}, client_factory());
    ASSERT_EQ(vm.rig.enable(), VGPU_SUCCESS);
    const pid_t pid = vm.worker->worker_pid();
    g->stop("the daemon is gone");
    const auto t0 = std::chrono::steady_clock::now();
    while (!process_gone(pid) && std::chrono::steady_clock::now() - t0 < 120s) std::this_thread::sleep_for(1ms);
    ASSERT_TRUE(process_gone(pid)) << "the client of the lost server was not ended";
    // No worker is started again; the command fails within the supervisor's
    // next looks, not after the call bound.
    const auto t1 = std::chrono::steady_clock::now();
    EXPECT_EQ(vm.rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {4096}}).status, VGPU_ERROR_NO_DEVICE);
    EXPECT_LT(std::chrono::steady_clock::now() - t1, 120s);
    EXPECT_LE(vm.worker->worker_pid(), 0);
    EXPECT_TRUE(process_gone(pid));
}

} // namespace
} // namespace kvmgpu::vgpu::test
