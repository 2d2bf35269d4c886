// A Linux-ABI guest's working directory (linux-cwd.sh): it starts in
// EXPECTED (run --cwd, or the default), opens input.txt and sub/inner.txt by
// relative paths, chdir()s, getcwd()s, fchdir()s, reads /proc/self/cwd,
// shares the cwd with a thread, and with "rw" makes, renames and removes
// files relative to it. Usage: cwd_check EXPECTED rw|ro.
// Prints "cwd_check passed" when every check holds; exits 1 otherwise.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "guest_check.h"

static std::string cwd_now() {
    char buf[4096];
    return getcwd(buf, sizeof buf) ? std::string(buf) : "errno " + std::to_string(errno);
}

static std::string read_file(const char* path) {
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return "errno " + std::to_string(errno);
    char buf[128] = {};
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n < 0 ? "read failed" : std::string(buf, n);
}

static void* up_one(void*) {
    CHECK(chdir("..") == 0, "chdir(\"..\") in a thread: errno %d", errno);
    return nullptr;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        printf("usage: cwd_check EXPECTED rw|ro\n");
        return 1;
    }
    const std::string start = argv[1];
    const bool rw = strcmp(argv[2], "rw") == 0;
    const std::string sub = start == "/" ? "/sub" : start + "/sub";

    printf("cwd at start: %s\n", cwd_now().c_str());
    CHECK(cwd_now() == start, "getcwd at start: %s, not %s", cwd_now().c_str(), start.c_str());
    CHECK(read_file("input.txt") == "cwd input\n", "input.txt by a relative path: %s", read_file("input.txt").c_str());
    struct stat st;
    CHECK(stat("input.txt", &st) == 0 && st.st_size == 10, "stat of input.txt");
    CHECK(access("sub/inner.txt", R_OK) == 0, "access of sub/inner.txt: errno %d", errno);

    CHECK(chdir("sub") == 0, "chdir(\"sub\"): errno %d", errno);
    CHECK(cwd_now() == sub, "getcwd after chdir: %s", cwd_now().c_str());
    CHECK(read_file("inner.txt") == "inner\n", "inner.txt from sub: %s", read_file("inner.txt").c_str());
    CHECK(read_file("../input.txt") == "cwd input\n", "../input.txt from sub");
    CHECK(read_file("input.txt") != "cwd input\n", "input.txt is not in sub");
    char link[4096] = {};
    const ssize_t n = readlink("/proc/self/cwd", link, sizeof link - 1);
    CHECK(n > 0 && sub == link, "/proc/self/cwd: %s", n > 0 ? link : "failed");
    char small[4];
    errno = 0;
    CHECK(getcwd(small, sizeof small) == nullptr && errno == ERANGE, "getcwd into 4 bytes: ERANGE, got %d", errno);

    if (rw) {
        FILE* f = fopen("made.txt", "w");
        CHECK(f && fputs("made in sub\n", f) >= 0 && fclose(f) == 0, "fopen(\"made.txt\", \"w\") in sub");
        CHECK(rename("made.txt", "../renamed.txt") == 0, "rename to ../renamed.txt: errno %d", errno);
        CHECK(mkdir("newdir", 0755) == 0 && rmdir("newdir") == 0, "mkdir and rmdir of newdir");
        CHECK(unlink("nothing.txt") == -1 && errno == ENOENT, "unlink of a missing file: ENOENT");
    } else {
        CHECK(mkdir("newdir", 0755) == -1 && errno == EROFS, "mkdir in a read-only mount: EROFS, got %d", errno);
    }

    // A thread's chdir is the process's.
    pthread_t t;
    CHECK(pthread_create(&t, nullptr, up_one, nullptr) == 0 && pthread_join(t, nullptr) == 0, "the thread ran");
    CHECK(cwd_now() == start, "getcwd after the thread's chdir(\"..\"): %s", cwd_now().c_str());

    // fchdir back into sub through a descriptor; the cwd outlives it.
    const int d = open("sub", O_RDONLY | O_DIRECTORY);
    CHECK(d >= 0, "open(\"sub\", O_DIRECTORY): errno %d", errno);
    CHECK(chdir("/") == 0 && cwd_now() == "/", "chdir(\"/\")");
    CHECK(fchdir(d) == 0, "fchdir: errno %d", errno);
    close(d);
    CHECK(cwd_now() == sub, "getcwd after fchdir: %s", cwd_now().c_str());
    CHECK(read_file("inner.txt") == "inner\n", "inner.txt after fchdir");
    CHECK(fchdir(1) == -1 && errno == ENOTDIR, "fchdir(1): ENOTDIR");

    // ".." never climbs above "/".
    CHECK(chdir("../../../../../../../..") == 0 && cwd_now() == "/", "chdir up past /: %s", cwd_now().c_str());
    CHECK(chdir("no-such-dir") == -1 && errno == ENOENT, "chdir to nothing: ENOENT");
    CHECK(chdir(start.c_str()) == 0 && cwd_now() == start, "chdir back to the start");

    if (failures) return 1;
    printf("cwd_check passed\n");
    return 0;
}
