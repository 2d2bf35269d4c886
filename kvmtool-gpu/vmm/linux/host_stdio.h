// The VMM's own standard streams, lent to a Linux-ABI guest (--stdio raw):
// its reads take the VMM's stdin, its writes to 1 and 2 reach the VMM's
// stdout and stderr byte for byte, as a program run natively in this shell
// would. Without it (the console, the default) stdin is empty and both
// outputs become "guest: " lines with control bytes escaped.
//
// What the guest gets of them, and no more: the bytes; fstat of the
// streams (a pipe, a file, a terminal); whether each is a terminal, and
// its settings and window size as they were when the VM was made (TCGETS,
// TIOCGWINSZ answered from that snapshot: the vCPU's seccomp filter allows
// no ioctl on these descriptors, and no guest can change the terminal or
// push input into it). stdin is reopened where it is a pipe, FIFO or
// terminal, non-blocking on a file description of the VMM's own (the
// shell's keeps its flags), so a guest thread waiting on it never holds
// the server's lock; a regular file is duplicated (reads never block, and
// the shell's offset is kept); a socket or a closed descriptor reads as end
// of file.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kvmtool-gpu/kvm/unique_fd.h"

namespace kvmgpu::linux_abi {

// Linux's struct termios as TCGETS copies it (x86-64: four flags words,
// the line discipline, 19 control characters), and struct winsize.
using KernelTermios = std::array<uint8_t, 36>;
using WindowSize = std::array<uint8_t, 8>;

// A write to a pipe whose reader is gone: EPIPE for the guest, and a
// SIGPIPE for the writing host thread, kept pending there (blocked, never
// taken: it is sent to this thread alone) instead of ending the VMM.
void block_sigpipe_on_this_thread();

class HostStdio {
public:
    // The streams at `in`, `out` and `err` (the VMM's 0, 1, 2; tests pass pipes).
    static std::shared_ptr<const HostStdio> take(int in = 0, int out = 1, int err = 2);

    // A new host descriptor for the guest's stdin (its own, closed with it),
    // and whether it is a non-blocking stream the server waits on outside
    // its lock; an invalid fd when stdin reads as end of file.
    UniqueFd stdin_descriptor() const;
    bool stdin_is_stream() const { return stdin_stream_; }

    // Writes all of `bytes` to stream 1 or 2 (waiting while a non-blocking
    // one is full). The count written, or -errno when nothing was (EPIPE
    // when its reader is gone: the SIGPIPE stays pending on this thread).
    int64_t write(int stream, std::string_view bytes) const;
    // fstat of stream 0, 1 or 2; -errno when it is closed.
    int stat(int stream, void* struct_stat) const;
    // The snapshot taken at take(): none where the stream is no terminal.
    const std::optional<KernelTermios>& termios(int stream) const { return tty_[stream]; }
    const std::optional<WindowSize>& window(int stream) const { return window_[stream]; }
    // What readlink of /proc/self/fd/N gives: a pipe's or socket's name and
    // a /dev path as the host has them; anything else "/dev/stdin" etc.
    const std::string& link(int stream) const { return link_[stream]; }

private:
    HostStdio() = default;
    UniqueFd in_;
    bool stdin_stream_ = false;
    std::array<int, 3> host_{-1, -1, -1};
    std::array<std::optional<KernelTermios>, 3> tty_;
    std::array<std::optional<WindowSize>, 3> window_;
    std::array<std::string, 3> link_;
};

} // namespace kvmgpu::linux_abi
