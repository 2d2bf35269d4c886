// The entry of a program built with kvmgpu_add_cuda_guest: the runtime
// calls guest_main, which calls the program's own `int main(int, char**)`
// (or `int main()`: the extra arguments are harmless under the SysV ABI)
// with argv[0] the program's name and argv[1..] the words of the guest
// cmdline, then ends as C's exit(main's value) does: atexit handlers (the
// CUDA registration's among them), then the status as the exit code
// (libc/exit_status.h).
#include "guest-stub/libc/exit_status.h"
#include "guest-stub/runtime/runtime.h"

// Not callable by name from C++; reached through its symbol.
extern "C" int kvmgpu_program_main(int argc, char** argv) __asm__("main");
// Written by kvmgpu_add_cuda_guest for each program.
extern "C" const char kvmgpu_program_name[];

namespace {

constexpr int kMaxArgs = 64;
char g_args[4096];
char* g_argv[kMaxArgs + 2];

int split_cmdline(const guest::Cmdline& cmd)
{
    int argc = 0;
    g_argv[argc++] = const_cast<char*>(kvmgpu_program_name);
    size_t len = cmd.length() < sizeof g_args - 1 ? cmd.length() : sizeof g_args - 1;
    memcpy(g_args, cmd.text(), len);
    g_args[len] = '\0';
    for (size_t i = 0; i < len && argc < kMaxArgs + 1;) {
        while (i < len && g_args[i] == ' ')
            g_args[i++] = '\0';
        if (i == len)
            break;
        g_argv[argc++] = &g_args[i];
        while (i < len && g_args[i] != ' ')
            ++i;
    }
    g_argv[argc] = nullptr;
    return argc;
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    const int argc = split_cmdline(guest::cmdline());
    const int status = kvmgpu_program_main(argc, g_argv);
    guest::libc::run_exit_handlers();
    return static_cast<int>(guest::libc::exit_status_code(status));
}
