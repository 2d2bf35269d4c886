// A Linux-ABI guest with threads (linux-guests.sh): pthread create/join,
// mutex and condition-variable contention, per-thread TLS, many short
// threads (vCPUs reused), a thread exiting while others run, timed futex
// waits, and hostile futex and clone arguments that must be refused.
// Modes that end the process from a thread: exit-group, main-exit, fault,
// limit (with --max-threads 4), parallel (two spinning threads timed
// against one: do vCPUs run in parallel?).
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <vector>

#include "guest_check.h"

static thread_local long t_value = -1;

static long sys_ret(long r) { return r < 0 ? -errno : r; }

static void* tls_worker(void* arg) {
    const long id = reinterpret_cast<long>(arg);
    t_value = id * 1000;
    for (int i = 0; i < 1000; ++i) sched_yield(); // others run and set theirs meanwhile
    return reinterpret_cast<void*>(t_value + (t_value == id * 1000 ? 1 : 0));
}

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static long g_counter = 0;
static void* mutex_worker(void*) {
    for (int i = 0; i < 20000; ++i) {
        pthread_mutex_lock(&g_mu);
        ++g_counter;
        pthread_mutex_unlock(&g_mu);
    }
    return nullptr;
}

// A bounded queue: producers and consumers on one mutex and two condition variables.
static pthread_cond_t g_not_empty = PTHREAD_COND_INITIALIZER, g_not_full = PTHREAD_COND_INITIALIZER;
static int g_queue[8], g_head = 0, g_count = 0;
static long g_consumed_sum = 0;
constexpr int kItems = 5000;
static void* producer(void*) {
    for (int i = 1; i <= kItems; ++i) {
        pthread_mutex_lock(&g_mu);
        while (g_count == 8) pthread_cond_wait(&g_not_full, &g_mu);
        g_queue[(g_head + g_count++) % 8] = i;
        pthread_cond_signal(&g_not_empty);
        pthread_mutex_unlock(&g_mu);
    }
    return nullptr;
}
static void* consumer(void*) {
    for (int i = 0; i < kItems / 2; ++i) {
        pthread_mutex_lock(&g_mu);
        while (g_count == 0) pthread_cond_wait(&g_not_empty, &g_mu);
        g_consumed_sum += g_queue[g_head];
        g_head = (g_head + 1) % 8;
        --g_count;
        pthread_cond_signal(&g_not_full);
        pthread_mutex_unlock(&g_mu);
    }
    return nullptr;
}

static void* tid_worker(void* out) {
    *static_cast<long*>(out) = syscall(SYS_gettid);
    return nullptr;
}

static std::atomic<int> g_running{0};
static std::atomic<bool> g_release{false};
static void* early_exit(void*) {
    g_running.fetch_add(1);
    pthread_exit(reinterpret_cast<void*>(42)); // while the others still run
}
static void* wait_release(void*) {
    g_running.fetch_add(1);
    while (!g_release.load()) sched_yield();
    return reinterpret_cast<void*>(7);
}

static void hostile() {
    uint32_t word = 5;
    // Bad addresses: unaligned, page 0, past RAM, the middle of nowhere.
    CHECK(sys_ret(syscall(SYS_futex, reinterpret_cast<char*>(&word) + 1, FUTEX_WAKE, 1, 0, 0, 0)) == -EINVAL,
          "futex unaligned: EINVAL");
    CHECK(sys_ret(syscall(SYS_futex, (void*)16, FUTEX_WAIT, 0, 0, 0, 0)) == -EFAULT, "futex page 0: EFAULT");
    CHECK(sys_ret(syscall(SYS_futex, (void*)(1ull << 40), FUTEX_WAKE, 1, 0, 0, 0)) == -EFAULT, "futex past RAM: EFAULT");
    CHECK(sys_ret(syscall(SYS_futex, (void*)(~0ull & ~3ull), FUTEX_WAKE, 1, 0, 0, 0)) == -EFAULT, "futex at the top: EFAULT");
    CHECK(sys_ret(syscall(SYS_futex, &word, FUTEX_WAIT, 4, 0, 0, 0)) == -EAGAIN, "futex wait, other value: EAGAIN");
    CHECK(sys_ret(syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 5, 0, 0, 0)) == -EINVAL, "futex bitset 0: EINVAL");
    uint32_t pi_word = 0; // Linux would take this lock (and write the word): here the priority-inheritance calls are refused
    CHECK(sys_ret(syscall(SYS_futex, &pi_word, 6 /* LOCK_PI */, 0, 0, 0, 0)) == -ENOSYS, "futex LOCK_PI: ENOSYS");
    CHECK(sys_ret(syscall(SYS_futex, &word, 0x7f, 0, 0, 0, 0)) == -ENOSYS, "futex op 127: ENOSYS");
    struct timespec bad = {0, 2000000000};
    CHECK(sys_ret(syscall(SYS_futex, &word, FUTEX_WAIT, 5, &bad, 0, 0)) == -EINVAL, "futex tv_nsec 2e9: EINVAL");
    CHECK(sys_ret(syscall(SYS_futex, &word, FUTEX_WAIT, 5, (void*)16, 0, 0)) == -EFAULT, "futex bad timeout: EFAULT");
    // A relative time-out of 30 ms that expires.
    struct timespec rel = {0, 30000000};
    const auto t0 = std::chrono::steady_clock::now();
    const long r = sys_ret(syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 5, &rel, 0, 0));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(r == -ETIMEDOUT && ms >= 29 && ms < 1000, "futex 30 ms time-out: %ld after %.1f ms", r, ms);
    // An absolute deadline in the past, on the real-time clock.
    struct timespec past = {1, 0};
    CHECK(sys_ret(syscall(SYS_futex, &word, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 5, &past, 0, ~0u)) == -ETIMEDOUT,
          "futex past deadline: ETIMEDOUT");
    CHECK(sys_ret(syscall(SYS_futex, &word, FUTEX_WAKE, 1, 0, 0, 0)) == 0, "futex wake, no waiter: 0");
    // clone: processes, partial threads, odd flags and stacks are refused; nothing starts.
    CHECK(sys_ret(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)) == -ENOSYS, "clone (fork): ENOSYS");
    CHECK(sys_ret(syscall(SYS_clone, CLONE_VM | SIGCHLD, 0, 0, 0, 0)) == -EINVAL, "clone CLONE_VM only: EINVAL");
    const long thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
    CHECK(sys_ret(syscall(SYS_clone, thread, 0, 0, 0, 0)) == -EINVAL, "clone without a stack: EINVAL");
    CHECK(sys_ret(syscall(SYS_clone, thread | CLONE_NEWNS, &word, 0, 0, 0)) == -EINVAL, "clone CLONE_NEWNS: EINVAL");
    CHECK(sys_ret(syscall(SYS_clone, thread | SIGCHLD, &word, 0, 0, 0)) == -EINVAL, "clone thread + signal: EINVAL");
    CHECK(sys_ret(syscall(SYS_clone, thread, (void*)(1ull << 40), 0, 0, 0)) == -EINVAL, "clone stack past RAM: EINVAL");
    static uint64_t stack[16]; // never run on: each of these clones must fail
    CHECK(sys_ret(syscall(SYS_clone, thread | CLONE_PARENT_SETTID, &stack[16], (void*)16, 0, 0)) == -EFAULT,
          "clone bad parent_tid: EFAULT");
    CHECK(sys_ret(syscall(SYS_clone, thread | CLONE_SETTLS, &stack[16], 0, 0, 1ull << 50)) == -EPERM,
          "clone TLS past user space: EPERM");
    CHECK(sys_ret(syscall(SYS_clone3, 0, 0)) == -ENOSYS, "clone3: ENOSYS");
    printf("hostile values refused\n");
}

static void* spin(void* arg) {
    volatile uint64_t n = *static_cast<uint64_t*>(arg);
    while (n) n = n - 1;
    return nullptr;
}

static double time_spinners(int threads, uint64_t iterations) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<pthread_t> t(threads);
    for (auto& h : t) pthread_create(&h, nullptr, spin, &iterations);
    for (auto& h : t) pthread_join(h, nullptr);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static void* sleep_forever(void*) {
    for (;;) pause();
}
static void* exit_soon(void*) {
    usleep(20000);
    exit(5); // exit_group from a thread while main waits in pthread_join
}
static void* outlive_main(void*) {
    usleep(50000);
    printf("worker after main's pthread_exit\n");
    fflush(stdout);
    return nullptr; // the last thread: glibc ends the process with exit(0)
}
static void* crash(void*) {
    usleep(10000);
    volatile int* page0 = nullptr;
    asm volatile("" : "+r"(page0)); // hide the null pointer from the compiler
    page0[2] = 1;                    // page 0: unmapped
    return nullptr;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "all";
    setvbuf(stdout, nullptr, _IOLBF, 0);
    pthread_t h;
    if (!strcmp(mode, "exit-group")) {
        pthread_t s;
        pthread_create(&s, nullptr, sleep_forever, nullptr);
        pthread_create(&h, nullptr, exit_soon, nullptr);
        pthread_join(s, nullptr);
        return 1; // never: the thread's exit(5) ends the process
    }
    if (!strcmp(mode, "main-exit")) {
        pthread_create(&h, nullptr, outlive_main, nullptr);
        pthread_exit(nullptr);
    }
    if (!strcmp(mode, "fault")) {
        pthread_create(&h, nullptr, crash, nullptr);
        pthread_join(h, nullptr);
        return 1;
    }
    if (!strcmp(mode, "limit")) {
        std::vector<pthread_t> t;
        int err = 0;
        while (t.size() < 10) {
            pthread_t x;
            if ((err = pthread_create(&x, nullptr, wait_release, nullptr)) != 0) break;
            t.push_back(x);
        }
        printf("limit: %zu threads started, then %s\n", t.size(), err == EAGAIN ? "EAGAIN" : strerror(err));
        g_release = true;
        for (auto& x : t) pthread_join(x, nullptr);
        // The slots are free again.
        const int again = pthread_create(&h, nullptr, wait_release, nullptr);
        if (again == 0) pthread_join(h, nullptr);
        printf("limit: after join, pthread_create %s\n", again == 0 ? "works again" : strerror(again));
        return err == EAGAIN && again == 0 ? 0 : 1;
    }
    if (!strcmp(mode, "parallel")) {
        const uint64_t n = argc > 2 ? strtoull(argv[2], nullptr, 10) : 50000000;
        const double one = time_spinners(1, n), two = time_spinners(2, n), four = time_spinners(4, n);
        printf("parallel: one spinning thread %.1f ms, two %.1f ms, four %.1f ms (%.2fx, %.2fx of one)\n", one, two,
               four, two / one, four / one);
        // The cost of a thread: pthread_create + pthread_join of one that returns at once.
        const auto t0 = std::chrono::steady_clock::now();
        long tid = 0;
        for (int i = 0; i < 100; ++i) {
            pthread_create(&h, nullptr, tid_worker, &tid);
            pthread_join(h, nullptr);
        }
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 100;
        printf("parallel: pthread_create + pthread_join %.0f us each (100 threads)\n", us);
        return 0;
    }

    // TLS: each thread's thread_local is its own.
    std::vector<pthread_t> t(8);
    for (long i = 0; i < 8; ++i) pthread_create(&t[i], nullptr, tls_worker, reinterpret_cast<void*>(i));
    for (long i = 0; i < 8; ++i) {
        void* ret = nullptr;
        CHECK(pthread_join(t[i], &ret) == 0, "join %ld", i);
        CHECK(reinterpret_cast<long>(ret) == i * 1000 + 1, "thread %ld's TLS: %ld", i, reinterpret_cast<long>(ret));
    }
    CHECK(t_value == -1, "main's TLS untouched: %ld", t_value);
    printf("tls ok: 8 threads\n");

    // Thread ids: distinct, not the process id; getpid the same everywhere.
    long tids[4] = {};
    for (int i = 0; i < 4; ++i) pthread_create(&t[i], nullptr, tid_worker, &tids[i]);
    for (int i = 0; i < 4; ++i) pthread_join(t[i], nullptr);
    for (int i = 0; i < 4; ++i) {
        CHECK(tids[i] > 1 && tids[i] != getpid(), "tid %ld", tids[i]);
        for (int j = 0; j < i; ++j) CHECK(tids[i] != tids[j], "tids %d and %d differ", i, j);
    }
    CHECK(syscall(SYS_gettid) == getpid(), "main's tid is the pid");
    printf("tids ok: %ld %ld %ld %ld\n", tids[0], tids[1], tids[2], tids[3]);

    // Mutex contention.
    for (int i = 0; i < 8; ++i) pthread_create(&t[i], nullptr, mutex_worker, nullptr);
    for (int i = 0; i < 8; ++i) pthread_join(t[i], nullptr);
    CHECK(g_counter == 8 * 20000, "mutex counter %ld", g_counter);
    printf("mutex ok: %ld\n", g_counter);

    // Condition variables: 2 producers, 4 consumers.
    for (int i = 0; i < 2; ++i) pthread_create(&t[i], nullptr, producer, nullptr);
    for (int i = 2; i < 6; ++i) pthread_create(&t[i], nullptr, consumer, nullptr);
    for (int i = 0; i < 6; ++i) pthread_join(t[i], nullptr);
    const long want = 2L * kItems * (kItems + 1) / 2;
    CHECK(g_consumed_sum == want, "condvar sum %ld, want %ld", g_consumed_sum, want);
    printf("condvar ok: %ld\n", g_consumed_sum);

    // Many threads, a few at a time: vCPUs are reused.
    int made = 0;
    for (int round = 0; round < 25; ++round) {
        for (int i = 0; i < 8; ++i) made += pthread_create(&t[i], nullptr, tid_worker, &tids[i % 4]) == 0;
        for (int i = 0; i < 8; ++i) pthread_join(t[i], nullptr);
    }
    CHECK(made == 200, "200 short threads, %d made", made);
    printf("many ok: %d threads\n", made);

    // A thread exits while others run; the rest finish normally.
    pthread_t a, b, c;
    pthread_create(&b, nullptr, wait_release, nullptr);
    pthread_create(&a, nullptr, early_exit, nullptr);
    pthread_create(&c, nullptr, wait_release, nullptr);
    void* ra = nullptr;
    pthread_join(a, &ra);
    while (g_running.load() < 3) sched_yield();
    g_release = true;
    void *rb = nullptr, *rc = nullptr;
    pthread_join(b, &rb);
    pthread_join(c, &rc);
    CHECK(reinterpret_cast<long>(ra) == 42 && reinterpret_cast<long>(rb) == 7 && reinterpret_cast<long>(rc) == 7,
          "early exit results %ld %ld %ld", reinterpret_cast<long>(ra), reinterpret_cast<long>(rb),
          reinterpret_cast<long>(rc));
    printf("early exit ok\n");

    hostile();
    printf("%s\n", failures ? "thread_check FAILED" : "thread_check passed");
    return failures ? 1 : 0;
}
