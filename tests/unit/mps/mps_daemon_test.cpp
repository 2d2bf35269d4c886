// The MPS control daemon's life against a fake nvidia-cuda-mps-control:
// started with pipe and log directories of its own (private, 0700), asked
// to quit at the end and its directory removed, stopped by the guard when
// the VMM dies without stopping it, attached to and left running, and
// refused in one line when absent, failing or at a doubtful directory. The
// run's fall-backs: contexts with a warning, or a stop.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kvmtool-gpu/devices/vgpu_worker/mps_control_daemon.h"
#include "kvmtool-gpu/vmm/gpu_share.h"
#include "tests/unit/mps/fake_mps.h"

namespace kvmgpu::test {
namespace {

using vgpu::MpsControlDaemon;
using vgpu::MpsError;
namespace fs = std::filesystem;

std::string thrown(auto&& f) {
    try {
        f();
    } catch (const MpsError& e) {
        return e.what();
    }
    return "";
}

bool eventually(auto&& cond, std::chrono::seconds bound = std::chrono::seconds(120)) { // a hang guard
    const auto until = std::chrono::steady_clock::now() + bound;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

// A daemon started outside the VMM (as an operator would), for attach.
std::string start_outside(const FakeMpsPath& fake) {
    const std::string pipe = fake.dir() + "/operator-pipe";
    fs::create_directory(pipe);
    chmod(pipe.c_str(), 0700);
    const std::string cmd = "CUDA_MPS_PIPE_DIRECTORY=" + pipe + " " + fake.dir() + "/" + vgpu::kMpsControlProgram + " -d";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_TRUE(eventually([&] { return fs::exists(pipe + "/nvidia-cuda-mps-control.pid"); }));
    return pipe;
}

void quit_outside(const FakeMpsPath& fake, const std::string& pipe) {
    const std::string cmd =
        "echo quit | CUDA_MPS_PIPE_DIRECTORY=" + pipe + " " + fake.dir() + "/" + vgpu::kMpsControlProgram;
    EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(MpsDaemon, AbsentFromPathIsOneLine) {
    FakeMpsPath fake(false);
    const std::string why = thrown([] { MpsControlDaemon::start(); });
    EXPECT_NE(why.find("nvidia-cuda-mps-control is not on PATH"), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(MpsDaemon, StartsInAPrivateDirectoryAndQuitsAtTheEnd) {
    FakeMpsPath fake;
    SKIP_WITHOUT_PYTHON(fake);
    std::string root;
    {
        auto d = MpsControlDaemon::start();
        ASSERT_TRUE(d->alive());
        EXPECT_TRUE(d->started_here());
        root = fs::path(d->pipe_dir()).parent_path();
        struct stat st;
        ASSERT_EQ(stat(root.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0700u) << "the daemon's directory must be private";
        EXPECT_EQ(st.st_uid, geteuid());
        const auto env = d->client_env();
        ASSERT_EQ(env.size(), 2u);
        EXPECT_EQ(env[0], (std::pair<std::string, std::string>{"CUDA_MPS_PIPE_DIRECTORY", d->pipe_dir()}));
        EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"CUDA_MPS_LOG_DIRECTORY", d->log_dir()}));
        // The daemon got both directories in its environment.
        EXPECT_EQ(fake.record().at(0), "start pipe=" + d->pipe_dir() + " log=" + d->log_dir());
    } // destructor: quit
    // Started once, then told to quit, and it did (get_server_list may come
    // between, while the daemon has no pid file yet, and after, as the
    // VMM waits for it to go).
    const auto rec = fake.record();
    EXPECT_EQ(std::count_if(rec.begin(), rec.end(), [](const std::string& l) { return l.rfind("start", 0) == 0; }), 1);
    const auto quit = std::find(rec.begin(), rec.end(), "client quit");
    ASSERT_NE(quit, rec.end()) << fake.record_text();
    EXPECT_NE(std::find(quit, rec.end(), "daemon quit"), rec.end()) << fake.record_text();
    EXPECT_FALSE(fs::exists(root)) << "the private directory was left behind";
}

TEST(MpsDaemon, FailingStartIsOneLineAndLeavesNothing) {
    FakeMpsPath fake;
    SKIP_WITHOUT_PYTHON(fake);
    setenv("FAKE_MPS_FAIL_START", "3", 1);
    // Its private directory under a TMPDIR of this test's own: other tests
    // running at once have theirs in /tmp.
    const std::string tmp = fake.dir() + "/tmp";
    fs::create_directory(tmp);
    setenv("TMPDIR", tmp.c_str(), 1);
    const std::string why = thrown([] { MpsControlDaemon::start(); });
    unsetenv("TMPDIR");
    EXPECT_NE(why.find("-d exited with status 3"), std::string::npos) << why;
    EXPECT_NE(why.find(tmp + "/kvmgpu-mps-"), std::string::npos) << why;
    EXPECT_NE(why.find("control.log"), std::string::npos) << why;
    for (const auto& e : fs::directory_iterator(tmp)) ADD_FAILURE() << e.path() << " left behind";
}

TEST(MpsDaemon, TheGuardStopsItWhenTheVmmDiesWithoutStopping) {
    FakeMpsPath fake;
    SKIP_WITHOUT_PYTHON(fake);
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    const pid_t vmm = fork();
    ASSERT_GE(vmm, 0);
    if (vmm == 0) {
        auto d = MpsControlDaemon::start();
        const std::string root = fs::path(d->pipe_dir()).parent_path();
        [[maybe_unused]] auto n = write(out[1], root.c_str(), root.size());
        _exit(0); // as a second Ctrl-C or a crash would: no destructor runs
    }
    close(out[1]);
    char buf[256] = {};
    ASSERT_GT(read(out[0], buf, sizeof buf - 1), 0);
    close(out[0]);
    int st;
    waitpid(vmm, &st, 0);
    const std::string root = buf;
    EXPECT_TRUE(eventually([&] { return fake.record_text().find("daemon quit") != std::string::npos; }))
        << fake.record_text();
    EXPECT_TRUE(eventually([&] { return !fs::exists(root); })) << root << " left behind";
}

TEST(MpsDaemon, AttachesToARunningDaemonAndLeavesItRunning) {
    FakeMpsPath fake;
    SKIP_WITHOUT_PYTHON(fake);
    const std::string pipe = start_outside(fake);
    {
        auto d = MpsControlDaemon::attach(pipe);
        EXPECT_FALSE(d->started_here());
        EXPECT_TRUE(d->alive());
        EXPECT_EQ(d->client_env(), (vgpu::EnvList{{"CUDA_MPS_PIPE_DIRECTORY", pipe}}));
    }
    EXPECT_EQ(fake.record_text().find("quit"), std::string::npos) << "an attached daemon was stopped";
    quit_outside(fake, pipe);
}

TEST(MpsDaemon, PipeDirectoryChecks) {
    FakeMpsPath fake;
    const std::string base = fake.dir();
    auto why = [](const std::string& dir) { return vgpu::check_mps_pipe_dir(dir); };
    EXPECT_NE(why(base + "/nope").find("No such file"), std::string::npos);
    std::ofstream(base + "/file") << "x";
    EXPECT_NE(why(base + "/file").find("is not a directory"), std::string::npos);
    fs::create_directory(base + "/empty");
    chmod((base + "/empty").c_str(), 0700);
    EXPECT_NE(why(base + "/empty").find("holds no control socket"), std::string::npos);
    fs::create_directory_symlink(base + "/empty", base + "/link");
    EXPECT_NE(why(base + "/link").find("symbolic link"), std::string::npos);
    fs::create_directory(base + "/fake");
    chmod((base + "/fake").c_str(), 0700);
    std::ofstream(base + "/fake/control") << "x";
    EXPECT_NE(why(base + "/fake").find("is not a socket"), std::string::npos);
    chmod((base + "/fake").c_str(), 0777);
    EXPECT_NE(why(base + "/fake").find("writable by every user"), std::string::npos);
    if (geteuid() == 0) {
        chmod((base + "/fake").c_str(), 0700);
        ASSERT_EQ(chown((base + "/fake").c_str(), 12345, 12345), 0);
        EXPECT_NE(why(base + "/fake").find("owned by uid 12345"), std::string::npos);
    }
    // A socket nobody listens on: attach says so.
    SKIP_WITHOUT_PYTHON(fake);
    const std::string pipe = start_outside(fake);
    quit_outside(fake, pipe);
    ASSERT_TRUE(eventually([&] { return !fs::exists(pipe + "/control"); }));
    std::string w = thrown([&] { MpsControlDaemon::attach(pipe); });
    EXPECT_NE(w.find("holds no control socket"), std::string::npos) << w;
}

TEST(GpuShareRun, NoMpsFallsBackToContextsWithAWarningOrStops) {
    FakeMpsPath fake(false);
    GpuShareOptions o{.mode = GpuShareMode::Mps, .fallback = MpsFallback::Contexts};
    auto s = GpuShare::open(o, std::vector<int>{0});
    EXPECT_EQ(s->mode(), GpuShareMode::Contexts);
    EXPECT_NE(s->describe().find("contexts (fallback from mps: nvidia-cuda-mps-control is not on PATH"),
              std::string::npos)
        << s->describe();
    o.fallback = MpsFallback::Stop;
    const std::string why = thrown([&] { GpuShare::open(o, std::vector<int>{0}); });
    EXPECT_NE(why.find("--gpu-share mps: nvidia-cuda-mps-control is not on PATH"), std::string::npos) << why;
    const std::string bad_pipe = thrown([&] {
        GpuShare::open(GpuShareOptions{.mode = GpuShareMode::Mps, .mps_pipe = fake.dir() + "/none"}, std::vector<int>{0});
    });
    EXPECT_NE(bad_pipe.find("--mps-pipe " + fake.dir() + "/none"), std::string::npos) << bad_pipe;
}

// The daemon dies mid-run: with fallback contexts every worker is replaced
// by one without MPS variables; with stop no worker is started again.
TEST(GpuShareRun, DaemonDeathMidRunFallsBackOrStops) {
    FakeMpsPath fake;
    SKIP_WITHOUT_PYTHON(fake);
    for (MpsFallback fb : {MpsFallback::Contexts, MpsFallback::Stop}) {
        auto s = GpuShare::open(
            GpuShareOptions{.mode = GpuShareMode::Mps, .thread_percentage = 50, .fallback = fb}, std::vector<int>{0});
        ASSERT_EQ(s->mode(), GpuShareMode::Mps);
        auto group = s->group();
        const auto env = group->client_env();
        ASSERT_EQ(env.size(), 3u); // pipe, log, thread percentage
        EXPECT_EQ(env[2].first, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
        EXPECT_NE(s->describe().find("control daemon started for the run"), std::string::npos) << s->describe();
        EXPECT_TRUE(s->check_daemon());
        const uint64_t gen = group->generation();
        group->worker_started(gen); // a worker of the server that is about to die
        // Kill the daemon as a crash would.
        std::ifstream pidfile(env[0].second + "/nvidia-cuda-mps-control.pid");
        pid_t pid = 0;
        ASSERT_TRUE(pidfile >> pid);
        ASSERT_EQ(kill(pid, SIGKILL), 0);
        ASSERT_TRUE(eventually([&] { return !s->check_daemon(); }));
        EXPECT_GT(group->generation(), gen) << "the workers of the dead server were not marked lost";
        EXPECT_NE(s->describe().find("LOST: the MPS control daemon at"), std::string::npos) << s->describe();
        group->worker_ended(gen);
        if (fb == MpsFallback::Contexts) {
            EXPECT_TRUE(group->client_env().empty()) << "new workers must not look for the dead daemon";
            EXPECT_TRUE(group->may_start());
        } else {
            EXPECT_TRUE(group->stopped());
            EXPECT_FALSE(group->may_start());
        }
    }
}

} // namespace
} // namespace kvmgpu::test
