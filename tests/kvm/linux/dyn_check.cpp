// A dynamic C++ program as a Linux-ABI guest with --root (ctest
// kvm_linux_guests, linux-guests.sh): built by plain g++ (a PIE whose
// interpreter is ld.so, libstdc++, libgcc_s and libc shared), it prints
// what iostream, an exception, a std::thread, a plugin it dlopens and a
// write to /dev/stdout (the path, not fd 1) give, the same lines as
// natively: the script compares the two outputs. argv[1]: the plugin's
// path; argv[2] "root-write": also try to write a file of the root.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {
int from_thread(int n) {
    int out = 0;
    std::thread t([&] { out = n * 6; });
    t.join();
    return out;
}
} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: dyn_check PLUGIN" << std::endl;
        return 2;
    }
    std::cout << "iostream: hello from a dynamic executable" << std::endl;
    try {
        throw std::runtime_error("thrown across libstdc++");
    } catch (const std::exception& e) {
        std::cout << "exception: " << e.what() << std::endl;
    }
    std::cout << "thread: " << from_thread(7) << std::endl;

    void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        std::cout << "dlopen failed: " << dlerror() << std::endl;
        return 1;
    }
    using Describe = const char* (*)(int);
    auto describe = reinterpret_cast<Describe>(dlsym(plugin, "plugin_describe"));
    if (!describe) {
        std::cout << "dlsym failed" << std::endl;
        return 1;
    }
    std::cout << "plugin: " << describe(3) << std::endl;
    dlclose(plugin);

    // The same as a shell's `> /dev/stdout`: opened by name.
    std::ofstream out("/dev/stdout", std::ios::app);
    out << "/dev/stdout: written by path" << std::endl;
    if (!out) return 1;

    if (argc > 2 && std::strcmp(argv[2], "root-write") == 0) {
        const int fd = open("/etc/hostname", O_WRONLY);
        std::cout << "write to the root: " << (fd < 0 ? strerrorname_np(errno) : "allowed") << std::endl;
    }
    std::cout << "done" << std::endl;
    return 0;
}
