// libcCheck: the guest's C library as a runtime-API program sees it, checked
// from a .cu file like any other (no kernels): malloc/free/realloc/calloc and
// aligned allocation, formatted output into buffers, number parsing and
// errno, qsort, the string functions, rand's range, the clocks, atexit
// order, new/delete, musl's float math against values known to the last bit
// or within an ulp, and the header-only C++ library (std::string, vector,
// sort, <random>).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <sys/time.h>
#include <vector>

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

static bool near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want) + 1e-300;
}

static void check_malloc(void)
{
    // Many sizes, freed in an interleaved order, then one big block that only
    // fits if the free blocks merged again.
    enum { kBlocks = 512 };
    static unsigned char* blocks[kBlocks];
    for (int i = 0; i < kBlocks; ++i) {
        const size_t n = 1 + (size_t)(i * 977) % 5000;
        blocks[i] = (unsigned char*)malloc(n);
        check(blocks[i] != NULL && ((uintptr_t)blocks[i] & 15) == 0, "malloc: 16-byte aligned block");
        memset(blocks[i], i & 0xff, n);
    }
    bool intact = true;
    for (int i = 0; i < kBlocks; ++i)
        intact = intact && blocks[i][0] == (i & 0xff) && blocks[i][(size_t)(i * 977) % 5000] == (i & 0xff);
    check(intact, "malloc: blocks do not overlap");
    for (int i = 0; i < kBlocks; i += 2)
        free(blocks[i]);
    for (int i = 1; i < kBlocks; i += 2)
        free(blocks[i]);
    void* big = malloc(1 << 20);
    check(big != NULL, "malloc(1 MiB) after frees");
    free(big);

    int* z = (int*)calloc(1000, sizeof(int));
    bool zero = z != NULL;
    for (int i = 0; zero && i < 1000; ++i)
        zero = z[i] == 0;
    check(zero, "calloc zeroes");
    for (int i = 0; z != NULL && i < 1000; ++i)
        z[i] = i;
    z = (int*)realloc(z, 100000 * sizeof(int));
    bool kept = z != NULL;
    for (int i = 0; kept && i < 1000; ++i)
        kept = z[i] == i;
    check(kept, "realloc keeps the contents");
    free(z);
    volatile size_t huge = (size_t)1 << 62; // volatile: the compiler would see the overflow
    check(calloc(huge, 16) == NULL, "calloc overflow -> NULL");

    void* a = NULL;
    check(posix_memalign(&a, 4096, 10000) == 0 && ((uintptr_t)a & 4095) == 0, "posix_memalign(4096)");
    free(a);
    void* b = aligned_alloc(256, 512);
    check(b != NULL && ((uintptr_t)b & 255) == 0, "aligned_alloc(256)");
    free(b);
    free(NULL);
}

static int cmp_int(const void* x, const void* y)
{
    const int a = *(const int*)x, b = *(const int*)y;
    return (a > b) - (a < b);
}

static void check_stdlib(void)
{
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%d|%5.2f|%-4s|%x|%lu|%c|%e", -42, 3.14159, "ab", 255u, 123456789012ul, 'z',
                     1.5e-7);
    check(strcmp(buf, "-42| 3.14|ab  |ff|123456789012|z|1.500000e-07") == 0 && n == (int)strlen(buf), "snprintf");
    check(snprintf(buf, 4, "%s", "truncated") == 9 && strcmp(buf, "tru") == 0, "snprintf truncates");
    sprintf(buf, "%08.3f", -2.5);
    check(strcmp(buf, "-002.500") == 0, "sprintf %08.3f");

    char* end = NULL;
    check(strtol("  -0x1fZ", &end, 0) == -31 && *end == 'Z', "strtol base 0, hex");
    check(strtoul("777", NULL, 8) == 511, "strtoul base 8");
    check(strtoll("9223372036854775808", NULL, 10) == INT64_MAX, "strtoll saturates");
    check(atoi("  123abc") == 123 && atol("-7") == -7, "atoi, atol");
    errno = 0;
    check(strtol("99999999999999999999", NULL, 10) == INT64_MAX && errno == ERANGE, "strtol overflow: ERANGE");
    check(abs(-5) == 5 && labs(-6L) == 6, "abs, labs");
    check(getenv("HOME") == NULL, "getenv: no environment");

    int v[200];
    srand(5);
    for (int i = 0; i < 200; ++i)
        v[i] = rand() % 1000 - 500;
    qsort(v, 200, sizeof v[0], cmp_int);
    bool sorted = true;
    for (int i = 1; i < 200; ++i)
        sorted = sorted && v[i - 1] <= v[i];
    check(sorted, "qsort");

    srand(1);
    const int first = rand();
    bool in_range = first >= 0 && first <= RAND_MAX;
    int lo = RAND_MAX, hi = 0;
    for (int i = 0; i < 100000; ++i) {
        const int r = rand();
        in_range = in_range && r >= 0 && r <= RAND_MAX;
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
    }
    check(in_range && lo < RAND_MAX / 1000 && hi > RAND_MAX - RAND_MAX / 1000, "rand spans [0, RAND_MAX]");
    srand(1);
    check(rand() == first, "srand(1) repeats the sequence");
}

static void check_strings(void)
{
    char s[64];
    strcpy(s, "hello");
    strcat(s, ", world");
    check(strcmp(s, "hello, world") == 0 && strlen(s) == 12, "strcpy, strcat, strlen");
    check(strchr(s, 'o') == s + 4 && strrchr(s, 'o') == s + 8 && strchr(s, 'q') == NULL, "strchr, strrchr");
    check(strstr(s, "wor") == s + 7 && strstr(s, "xyz") == NULL && strstr(s, "") == s, "strstr");
    check(memchr(s, ',', 12) == s + 5, "memchr");
    check(strncmp("abcd", "abce", 3) == 0 && memcmp("ab", "ac", 2) < 0, "strncmp, memcmp");
    char t[8];
    strncpy(t, "ab", sizeof t);
    check(t[2] == '\0' && t[7] == '\0', "strncpy pads");
    char* d = strdup(s);
    check(d != NULL && strcmp(d, s) == 0, "strdup");
    free(d);
    memmove(s + 1, s, 5);
    check(memcmp(s, "hhello", 6) == 0, "memmove overlapping");
}

static void check_math(void)
{
    // Exact results (correctly rounded by musl) and identities.
    check(sqrtf(2.0f) == 1.41421353816986083984375f, "sqrtf(2)");
    check(sqrt(2.0) == 1.4142135623730951, "sqrt(2)");
    check(fabsf(-3.5f) == 3.5f && fabs(-0.0) == 0.0 && !signbit(fabs(-0.0)), "fabsf, fabs");
    check(expf(0.0f) == 1.0f && logf(1.0f) == 0.0f, "expf(0), logf(1)");
    check(near(expf(1.0f), 2.71828182845904523536, 1.2e-7), "expf(1) within an ulp");
    check(near(exp(1.0), 2.71828182845904523536, 2.3e-16), "exp(1) within an ulp");
    check(near(logf(10.0f), 2.30258509299404568402, 1.2e-7), "logf(10)");
    check(near(powf(2.0f, 10.5f), 1448.15468787004, 1.2e-7), "powf(2, 10.5)");
    check(near(pow(10.0, -3.0), 1e-3, 2.3e-16), "pow(10, -3)");
    check(near(tanhf(0.5f), 0.46211715726000974, 1.2e-7), "tanhf(0.5)");
    check(near(atan2f(1.0f, 1.0f), 0.78539816339744831, 1.2e-7), "atan2f(1, 1)");
    check(near(erff(0.5f), 0.52049987781304654, 1.2e-7), "erff(0.5)");
    check(floorf(-1.5f) == -2.0f && ceilf(-1.5f) == -1.0f && roundf(2.5f) == 3.0f && truncf(-2.7f) == -2.0f,
          "floorf, ceilf, roundf, truncf");
    check(fmaxf(1.0f, NAN) == 1.0f && fminf(-1.0f, 2.0f) == -1.0f, "fmaxf with NaN, fminf");
    check(fmaf(2.0f, 3.0f, 1.0f) == 7.0f && fmodf(7.5f, 2.0f) == 1.5f, "fmaf, fmodf");
    check(isinf(expf(1000.0f)) && expf(-1000.0f) == 0.0f && isnan(logf(-1.0f)), "expf/logf at the edges");
    // The trig family: argument reduction (musl's __rem_pio2*, built with the
    // stack protector: the canary is read at %fs:0x28).
    check(sinf(0.0f) == 0.0f && cosf(0.0f) == 1.0f, "sinf(0), cosf(0)");
    check(near(sinf(1.0f), 0.84147098480789650665, 1.2e-7) && near(cosf(1.0f), 0.54030230586813971740, 1.2e-7),
          "sinf(1), cosf(1)");
    check(near(tanf(0.5f), 0.54630248984379051326, 1.2e-7), "tanf(0.5)");
    check(near(sin(1e22), -0.85220084976718880177, 2.3e-16), "sin(1e22): large-argument reduction");
    check(near(cos(3.0), -0.98999249660044545727, 2.3e-16) && near(tan(1.0), 1.5574077246549022305, 2.3e-16),
          "cos(3), tan(1)");
    float sn = 0.0f, cs = 0.0f;
    sincosf(1e20f, &sn, &cs);
    check(near((double)sn * sn + (double)cs * cs, 1.0, 1e-6), "sincosf(1e20): sin^2 + cos^2 = 1");
    volatile double angle = 0.75; // volatile: one sin and one cos of a run-time value become sincos
    const double s2 = sin(angle), c2 = cos(angle);
    check(near(s2 * s2 + c2 * c2, 1.0, 4.5e-16), "sin/cos of one value (the compiler's sincos)");
    float frac_int;
    check(modff(3.25f, &frac_int) == 0.25f && frac_int == 3.0f && ldexpf(1.0f, 10) == 1024.0f, "modff, ldexpf");
}

// Handlers run last-registered first: `second` runs before `first`.
static int g_handlers_run = 0;
static void at_exit_first(void)
{
    printf("libcCheck: atexit: first registered runs %s\n",
           g_handlers_run == 1 ? "second (ok)" : "out of order (FAILED)");
    if (g_handlers_run != 1)
        exit(EXIT_FAILURE); // exit from a handler: the remaining handlers still run once
}
static void at_exit_second(void)
{
    printf("libcCheck: atexit: last registered runs %s\n", g_handlers_run == 0 ? "first (ok)" : "late (FAILED)");
    ++g_handlers_run;
}

struct Counted {
    static int live;
    int v;
    Counted() : v(7) { ++live; }
    ~Counted() { --live; }
};
int Counted::live = 0;

static void check_time(void)
{
    check(time(NULL) == (time_t)-1, "time(): no calendar in the guest");
    struct timespec a, b, rt;
    check(clock_gettime(CLOCK_MONOTONIC, &a) == 0, "clock_gettime(CLOCK_MONOTONIC)");
    struct timeval tv0, tv1;
    check(gettimeofday(&tv0, NULL) == 0, "gettimeofday");
    const clock_t c0 = clock();
    volatile unsigned spin = 0;
    for (unsigned i = 0; i < 20000000u; ++i) // some milliseconds of work
        spin += i;
    check(clock_gettime(CLOCK_MONOTONIC, &b) == 0, "clock_gettime again");
    check(gettimeofday(&tv1, NULL) == 0, "gettimeofday again");
    const double mono = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    const double tod = (tv1.tv_sec - tv0.tv_sec) + (tv1.tv_usec - tv0.tv_usec) * 1e-6;
    const double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    check(mono > 0 && mono < 60 && b.tv_nsec < 1000000000L, "CLOCK_MONOTONIC advances");
    check(fabs(tod - mono) < 1e-3 + 0.01 * mono && fabs(cpu - mono) < 1e-3 + 0.01 * mono,
          "gettimeofday and clock() agree with CLOCK_MONOTONIC");
    check(clock_gettime(CLOCK_REALTIME, &rt) == -1, "CLOCK_REALTIME refused");
    printf("libcCheck: a 20M-iteration loop took %.3f ms (monotonic), %.3f ms (gettimeofday), %.3f ms (clock)\n",
           mono * 1e3, tod * 1e3, cpu * 1e3);
}

static void check_cxx(void)
{
    std::string s = "kvmtool";
    s += "-gpu";
    s.append(3, '!');
    check(s == "kvmtool-gpu!!!" && s.size() == 14 && s.find("gpu") == 8 && s.substr(8, 3) == "gpu", "std::string");
    check(std::to_string(-1234) == "-1234" && std::stoi(" 77") == 77, "std::to_string, std::stoi");
    std::vector<int> v;
    for (int i = 0; i < 1000; ++i)
        v.push_back((i * 7919) % 1000);
    std::sort(v.begin(), v.end());
    check(v.size() == 1000 && v.front() == 0 && v.back() == 999 && std::is_sorted(v.begin(), v.end()),
          "std::vector, std::sort");
    std::mt19937 gen(2026);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    bool in_range = true;
    for (int i = 0; i < 1000; ++i) {
        const float x = dist(gen);
        in_range = in_range && x >= -1.0f && x < 1.0f;
    }
    check(in_range, "<random>: mt19937, uniform_real_distribution");
}

int main(void)
{
    printf("libcCheck: the guest C library\n");
    check_cxx();
    check_time();
    check_malloc();
    check_stdlib();
    check_strings();
    check_math();
    Counted* c = new Counted[10];
    check(Counted::live == 10 && c[9].v == 7, "new[] runs constructors");
    delete[] c;
    check(Counted::live == 0, "delete[] runs destructors");
    check(atexit(at_exit_first) == 0 && atexit(at_exit_second) == 0, "atexit");
    printf("libcCheck: %d checks, %d failed\n", g_checks, g_failures);
    printf("%s\n", g_failures == 0 ? "Test PASSED" : "Test FAILED");
    return g_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
