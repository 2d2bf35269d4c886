// guestEnv: the environment the VMM gives a CUDA runtime-API program (a
// static Linux executable whose system calls it serves; docs/runtime-api.md),
// checked from a .cu file like any other (no kernels): argv and the
// environment, the clocks, errno from served and refused calls, stdio, files
// in the --share directory (written, read back, listed, mapped) and file
// data moved to and from the vGPU, C++ exceptions. Guest only: it needs
// `kvmtool-gpu run --share DIR -- share` (run-cuda-samples.sh gives both).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <vector>

#include <cuda_runtime.h>

#include "check_cuda.h"

static int g_failures = 0;
static int g_checks = 0;

static void check(bool ok, const char* what)
{
    ++g_checks;
    if (!ok) {
        printf("  FAILED: %s\n", what);
        ++g_failures;
    }
}

static double seconds(clockid_t clock)
{
    struct timespec t;
    if (clock_gettime(clock, &t) != 0)
        return -1.0;
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void check_environment(void)
{
    const char* home = getenv("HOME");
    const char* term = getenv("TERM");
    check(home != NULL && strcmp(home, "/") == 0 && term != NULL && strcmp(term, "dumb") == 0,
          "environment: HOME=/ and TERM=dumb");
    char cwd[64];
    check(getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, "/") == 0, "getcwd: the share's root");
}

static void check_clocks(void)
{
    // The host's clocks, served by the VMM: a calendar (after 2020-01-01),
    // monotonic time that advances, CPU time that never outruns it, and a
    // sleep that lasts at least as long as asked.
    const time_t now = time(NULL);
    check(now > 1577836800, "time(): the host's calendar");
    struct timeval tv;
    check(gettimeofday(&tv, NULL) == 0 && tv.tv_sec >= now, "gettimeofday after time()");
    const double real = seconds(CLOCK_REALTIME);
    check(real >= (double)now, "CLOCK_REALTIME after time()");

    const double mono0 = seconds(CLOCK_MONOTONIC), cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
    volatile unsigned spin = 0;
    for (unsigned i = 0; i < 20000000u; ++i) // some milliseconds of work
        spin += i;
    const double cpu1 = seconds(CLOCK_PROCESS_CPUTIME_ID), mono1 = seconds(CLOCK_MONOTONIC);
    check(mono0 >= 0 && mono1 > mono0, "CLOCK_MONOTONIC advances");
    // One thread: its CPU time fits inside the monotonic interval around it
    // (1 ms for the clocks' own granularity).
    check(cpu0 >= 0 && cpu1 > cpu0 && cpu1 - cpu0 <= mono1 - mono0 + 1e-3, "CPU time advances, within wall time");
    const double before = seconds(CLOCK_MONOTONIC);
    const struct timespec ten_ms = {0, 10000000};
    check(nanosleep(&ten_ms, NULL) == 0, "nanosleep(10 ms)");
    check(seconds(CLOCK_MONOTONIC) - before >= 0.010, "nanosleep lasts at least 10 ms");
    printf("guestEnv: a 20M-iteration loop took %.3f ms (monotonic), %.3f ms (CPU time)\n", (mono1 - mono0) * 1e3,
           (cpu1 - cpu0) * 1e3);
}

static void check_errno(void)
{
    errno = 0;
    check(open("/no-such-file", O_RDONLY) == -1 && errno == ENOENT, "open of a missing file: ENOENT");
    errno = 0;
    check(write(99, "x", 1) == -1 && errno == EBADF, "write to a closed descriptor: EBADF");
    errno = 0;
    check(mkdir("/new-dir", 0755) == 0 && mkdir("/new-dir", 0755) == -1 && errno == EEXIST, "mkdir in the share, EEXIST the second time");
    errno = 0;
    check(rmdir("/new-dir") == 0 && rmdir("/new-dir") == -1 && errno == ENOENT, "rmdir in the share, ENOENT the second time");
}

static void check_stdio(void)
{
    check(isatty(STDOUT_FILENO) == 0, "stdout is not a terminal");
    check(getchar() == EOF && feof(stdin), "stdin reads end of file");
    check(fprintf(stderr, "guestEnv: a line on stderr\n") > 0 && fflush(stdout) == 0, "stderr, fflush");
}

static void check_exceptions(void)
{
    std::vector<int> v(3);
    bool caught = false;
    try {
        v.at(3) = 1;
    } catch (const std::out_of_range&) {
        caught = true;
    }
    check(caught, "C++ exceptions: std::out_of_range caught");
}

// A file of `bytes` written through stdio, read back into page-locked
// memory, listed, mapped, and its mapping copied to the device and back.
static void check_share_files(void)
{
    const size_t bytes = 3 * 4096 + 100;
    unsigned char* data = (unsigned char*)malloc(bytes);
    for (size_t i = 0; i < bytes; ++i)
        data[i] = (unsigned char)(i * 7 + 3);
    FILE* f = fopen("/guestEnv.bin", "wb");
    check(f != NULL, "fopen for writing in the share");
    if (f == NULL)
        return;
    check(fwrite(data, 1, bytes, f) == bytes && fclose(f) == 0, "fwrite, fclose");

    struct stat st;
    check(stat("/guestEnv.bin", &st) == 0 && (size_t)st.st_size == bytes && S_ISREG(st.st_mode), "stat: size");
    bool listed = false;
    if (DIR* d = opendir("/")) {
        while (struct dirent* e = readdir(d))
            listed = listed || strcmp(e->d_name, "guestEnv.bin") == 0;
        closedir(d);
    }
    check(listed, "readdir lists the file");

    unsigned char* pinned = NULL;
    CHECK(cudaMallocHost((void**)&pinned, bytes));
    const int fd = open("/guestEnv.bin", O_RDONLY);
    check(fd >= 0 && read(fd, pinned, bytes) == (ssize_t)bytes && memcmp(pinned, data, bytes) == 0,
          "read into page-locked memory");
    void* map = fd >= 0 ? mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    check(map != MAP_FAILED && memcmp(map, data, bytes) == 0, "mmap of a share file");
    if (fd >= 0)
        close(fd);

    // The mapping (pageable memory) to the device, back into the pinned
    // buffer, which is then written to a second file and compared.
    unsigned char* dev = NULL;
    CHECK(cudaMalloc((void**)&dev, bytes));
    memset(pinned, 0, bytes);
    if (map != MAP_FAILED) {
        CHECK(cudaMemcpy(dev, map, bytes, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost));
        munmap(map, bytes);
    }
    check(memcmp(pinned, data, bytes) == 0, "file mapping -> device -> page-locked memory");
    const int out = open("/guestEnv.copy", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    check(out >= 0 && write(out, pinned, bytes) == (ssize_t)bytes && close(out) == 0,
          "write from page-locked memory to a new file");
    std::vector<unsigned char> back(bytes);
    FILE* g = fopen("/guestEnv.copy", "rb");
    check(g != NULL && fread(back.data(), 1, bytes, g) == bytes && fgetc(g) == EOF &&
              memcmp(back.data(), data, bytes) == 0,
          "the copy reads back whole");
    if (g != NULL)
        fclose(g);
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(pinned));
    free(data);
}

int main(int argc, char** argv)
{
    printf("guestEnv: the environment of a runtime-API program in the guest\n");
    if (argc != 2 || strcmp(argv[1], "share") != 0) {
        printf("guestEnv: FAILED: expects one argument, 'share', and a --share directory\n");
        return EXIT_FAILURE;
    }
    check_environment();
    check_clocks();
    check_errno();
    check_stdio();
    check_exceptions();
    check_share_files();
    printf("guestEnv: %d checks, %d failed\n", g_checks, g_failures);
    printf("%s\n", g_failures == 0 ? "Test PASSED" : "Test FAILED");
    return g_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
