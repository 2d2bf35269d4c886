// A Linux-ABI guest built by the ordinary toolchain (g++ -static and
// -static-pie, tests/kvm/CMakeLists.txt): iostream, std::string, an
// exception thrown and caught, an assert that holds, the heap (brk and a
// large mmap'd block that realloc grows), files in the share, and attempts
// to leave the share that must fail. Usage: cxx_check rw|ro EXIT_CODE.
// Prints what linux-guests.sh checks; exits 99 when a check fails here.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

static int fail(const std::string& why) {
    std::cout << "FAILED: " << why << std::endl;
    return 99;
}

int main(int argc, char** argv) {
    if (argc != 3) return fail("usage: cxx_check rw|ro EXIT_CODE");
    const std::string mode = argv[1];
    std::string greeting = "iostream";
    greeting += " ok";
    std::cout << greeting << ", argv[0] " << argv[0] << std::endl;
    try {
        throw std::runtime_error("boom");
    } catch (const std::exception& e) {
        std::cout << "exception caught: " << e.what() << std::endl;
    }
    assert(greeting.size() == 11);

    std::vector<double> big(4 << 20); // 32 MiB: an mmap, not the brk
    for (size_t i = 0; i < big.size(); i += 4096) big[i] = double(i);
    char* grown = static_cast<char*>(std::malloc(1 << 20));
    std::memset(grown, 'x', 1 << 20);
    grown = static_cast<char*>(std::realloc(grown, 8 << 20)); // mremap
    if (!grown || grown[(1 << 20) - 1] != 'x') return fail("realloc lost data");
    std::free(grown);
    std::cout << "heap ok: " << big[4096 * 3] << std::endl;

    std::ifstream in("input.txt");
    if (!in) return fail("cannot open input.txt");
    std::string line, words;
    int lines = 0;
    while (std::getline(in, line)) ++lines, words += line + ";";
    std::cout << "input: " << lines << " lines: " << words << std::endl;

    // The share is the root: none of these may reach outside.txt beside it.
    for (const char* path : {"../outside.txt", "/../outside.txt", "sub/../../outside.txt", "link_out", "abs_link",
                             "/proc/self/exe"}) {
        const int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            char buf[16] = {};
            const ssize_t n = read(fd, buf, sizeof buf - 1);
            if (n > 0 && std::strstr(buf, "outside")) return fail(std::string("escaped through ") + path);
            close(fd);
        }
        std::cout << "escape " << path << ": " << (fd < 0 ? strerrorname_np(errno) : "inside") << std::endl;
    }

    std::ofstream out("output.txt");
    if (mode == "ro") {
        const int fd = open("output.txt", O_WRONLY | O_CREAT, 0644);
        std::cout << "write in a read-only share: " << (fd < 0 ? strerrorname_np(errno) : "allowed") << std::endl;
        return fd < 0 && errno == EROFS ? std::atoi(argv[2]) : fail("read-only share took a write");
    }
    out << "processed " << lines << " lines" << std::endl;
    out.close();
    struct stat st {};
    if (stat("output.txt", &st) != 0 || st.st_size == 0) return fail("output.txt not written");
    std::cout << "output.txt: " << st.st_size << " bytes" << std::endl;
    return std::atoi(argv[2]);
}
