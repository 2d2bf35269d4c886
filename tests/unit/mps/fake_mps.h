// A PATH of the test's own holding a fake nvidia-cuda-mps-control
// (tests/support/fake_mps_control.py under python3), a record of every call
// it gets, and the process's PATH restored afterwards.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu_worker/mps_control_daemon.h"

namespace kvmgpu::test {

class FakeMpsPath {
public:
    // `install`: false leaves the PATH without the program (MPS absent).
    explicit FakeMpsPath(bool install = true) {
        const char* path = std::getenv("PATH");
        old_path_ = path ? path : "";
        python_ = real_python();
        char tmpl[] = "/tmp/kvmgpu-fake-mps-XXXXXX";
        dir_ = mkdtemp(tmpl);
        record_ = dir_ + "/record";
        if (install && !python_.empty()) {
            std::ifstream body(KVMGPU_FAKE_MPS_SCRIPT);
            std::ofstream out(dir_ + "/" + vgpu::kMpsControlProgram);
            out << "#!" << python_ << "\n" << body.rdbuf();
            out.close();
            chmod((dir_ + "/" + vgpu::kMpsControlProgram).c_str(), 0755);
        }
        setenv("PATH", dir_.c_str(), 1);
        setenv("FAKE_MPS_RECORD", record_.c_str(), 1);
    }
    ~FakeMpsPath() {
        setenv("PATH", old_path_.c_str(), 1);
        unsetenv("FAKE_MPS_RECORD");
        unsetenv("FAKE_MPS_FAIL_START");
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    FakeMpsPath(const FakeMpsPath&) = delete;
    FakeMpsPath& operator=(const FakeMpsPath&) = delete;

    // python3's own executable, not a shim that needs the PATH we replace.
    static std::string real_python() {
        if (vgpu::find_program_on_path("python3", std::getenv("PATH") ? std::getenv("PATH") : "").empty()) return "";
        FILE* f = popen("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", "r");
        if (!f) return "";
        char buf[512] = {};
        const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
        pclose(f);
        std::string p = got ? buf : "";
        while (!p.empty() && (p.back() == '\n' || p.back() == '\r')) p.pop_back();
        return p;
    }

    bool have_python() const { return !python_.empty(); }
    const std::string& dir() const { return dir_; }
    // The fake's calls so far, one line each.
    std::vector<std::string> record() const {
        std::ifstream in(record_);
        std::vector<std::string> out;
        for (std::string l; std::getline(in, l);) out.push_back(l);
        return out;
    }
    std::string record_text() const {
        std::string s;
        for (const auto& l : record()) s += l + "\n";
        return s;
    }

private:
    std::string old_path_, python_, dir_, record_;
};

#define SKIP_WITHOUT_PYTHON(fake) \
    if (!(fake).have_python()) GTEST_SKIP() << "python3 is not on PATH: the fake nvidia-cuda-mps-control needs it"

} // namespace kvmgpu::test
