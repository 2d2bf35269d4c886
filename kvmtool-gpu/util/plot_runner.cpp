#include "kvmtool-gpu/util/plot_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace kvmgpu {

namespace {
bool readable(const std::string& p) { return !p.empty() && ::access(p.c_str(), R_OK) == 0; }

std::string exe_dir() {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    const std::string s(buf, static_cast<size_t>(n));
    return s.substr(0, s.rfind('/'));
}

// Exit status of argv[0] argv...; 127 when it cannot be started. Quiet:
// its stderr goes nowhere.
int run_child(const std::vector<std::string>& argv, bool quiet = false) {
    const pid_t pid = ::fork();
    if (pid < 0) return 127;
    if (pid == 0) {
        if (quiet) {
            const int null = ::open("/dev/null", O_WRONLY);
            if (null >= 0) ::dup2(null, 2);
        }
        std::vector<char*> a;
        for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
        a.push_back(nullptr);
        ::execvp(a[0], a.data());
        std::_Exit(127);
    }
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
} // namespace

std::string find_plot_script(const std::string& given, const std::string& name) {
    if (!given.empty()) return given;
    const std::string dir = exe_dir();
    for (const std::string& p : {dir + "/plots/" + name, dir + "/../plots/" + name})
        if (readable(p)) return p;
    return {};
}

std::string run_plot(const std::string& script, const std::vector<std::string>& args, const std::string& png) {
    if (!readable(script)) return "plot skipped: no plot script (give --plot-script PATH)";
    bool found = false;
    for (const char* python : {"python3", "/usr/bin/python3"}) {
        const int has = run_child({python, "-c", "import matplotlib"}, true);
        found |= has != 127;
        if (has != 0) continue;
        std::vector<std::string> argv{python, script};
        argv.insert(argv.end(), args.begin(), args.end());
        const int rc = run_child(argv);
        if (rc == 0) return "plot: " + png;
        return "plot failed: " + script + " exited with status " + std::to_string(rc);
    }
    if (!found) return "plot skipped: python3 not found";
    return "plot skipped: python3 has no matplotlib (apt-get install python3-matplotlib)";
}

} // namespace kvmgpu
