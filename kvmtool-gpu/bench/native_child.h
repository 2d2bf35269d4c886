// The one way a bench runs its native side: in a forked child process, so
// that this process never initialises CUDA (the vGPU's GPU worker is forked
// from it later, and a forked child cannot use its parent's CUDA). The
// child's result structs come back through a pipe as wire.h bytes. Every
// wait is bounded: a child still running at its deadline is killed, and
// one line on stdout says so.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/bench_report.h"
#include "kvmtool-gpu/bench/wire.h"

namespace kvmgpu::bench {

// One forked child whose body's bytes come back when it ends.
class NativeChild {
public:
    using Clock = std::chrono::steady_clock;
    // Forks; the child runs body() and leaves with _exit(0) after writing
    // its bytes. `what` names it in the lines that report a failure.
    NativeChild(std::string what, const std::function<std::string()>& body);
    ~NativeChild(); // a child never collected is killed and reaped
    NativeChild(const NativeChild&) = delete;
    NativeChild& operator=(const NativeChild&) = delete;

    bool started() const { return fork_error_.empty(); } // the fork succeeded
    // The body's bytes, once the child has ended normally by `deadline`;
    // else nullopt and *why says what happened (fork failed, a signal, an
    // exit status, killed at the deadline). Call once.
    std::optional<std::string> collect(Clock::time_point deadline, std::string* why);

private:
    void kill_and_reap();
    std::string what_;
    pid_t pid_ = -1;
    int fd_ = -1;           // the pipe's read end
    std::string fork_error_; // set when there is no child
};

// A struct T from measure(), run in a NativeChild given bound_s seconds.
template <class T>
std::optional<T> run_in_child(const std::string& what, double bound_s, const std::function<T()>& measure,
                              std::string* why) {
    NativeChild child(what, [&] {
        wire::Writer w;
        w.put(measure());
        return w.take();
    });
    const auto bytes = child.collect(
        NativeChild::Clock::now() + std::chrono::duration_cast<NativeChild::Clock::duration>(
                                        std::chrono::duration<double>(bound_s)),
        why);
    if (!bytes) return std::nullopt;
    T out{};
    wire::Reader r(*bytes);
    r.get(out);
    if (!r.ok()) {
        *why = what + " returned a malformed result";
        return std::nullopt;
    }
    return out;
}

// A bench's native baseline: measure() fills its copy of *meta (the GPU,
// the driver, "native_baseline" and meta.native_baseline) and returns the
// rows. Both come back here; when the child fails, no rows, and meta's
// "native_baseline" says why.
template <class Row>
std::vector<Row> native_rows_in_child(BenchMeta* meta, double bound_s,
                                      const std::function<std::vector<Row>(BenchMeta*)>& measure) {
    struct Result {
        BenchMeta meta;
        std::vector<Row> rows;
        auto wire() { return std::tie(meta, rows); }
    };
    std::string why;
    const auto got = run_in_child<Result>("the native baseline's process", bound_s, [&] {
        Result r{*meta, {}};
        r.rows = measure(&r.meta);
        return r;
    }, &why);
    if (!got) {
        meta->native_baseline = false;
        meta->set("native_baseline", "none (" + why + ")");
        return {};
    }
    *meta = got->meta;
    return got->rows;
}

} // namespace kvmgpu::bench
