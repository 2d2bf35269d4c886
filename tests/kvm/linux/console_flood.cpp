// A console flood: one write of 8 MiB of newlines comes back short (the
// VMM takes at most 64 KiB a call), then the rest is written in a loop,
// which the VMM's console cuts at its output limit. With "forever" the
// loop never ends, for --timeout to stop. Usage: console_flood [forever]
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace {
char flood[8 << 20];
}

int main(int argc, char** argv) {
    std::memset(flood, '\n', sizeof flood);
    const ssize_t first = write(1, flood, sizeof flood);
    std::fprintf(stderr, "console_flood: one write took %zd bytes\n", first);
    do {
        for (size_t done = 0; done < sizeof flood;) {
            const ssize_t n = write(1, flood + done, sizeof flood - done);
            if (n <= 0) return 1;
            done += static_cast<size_t>(n);
        }
    } while (argc > 1 && std::strcmp(argv[1], "forever") == 0);
    return 0;
}
