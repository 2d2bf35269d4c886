// nvcc's <<<...>>> configuration stack (guest-stub/cudart/call_configuration.cpp),
// built for the host as the Linux guests build it (GUEST_THREADS): CUDA
// keeps it per thread, so a thread pops what it pushed whatever other
// threads push and pop meanwhile. The steps below interleave two threads
// in a fixed order; a stack shared by the threads fails each of them.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "guest-stub/cudart/cudart_internal.h"

extern "C" unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st* stream);
extern "C" cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream);

// The one runtime function the stack calls (on a pop with nothing pushed):
// here it only hands the error back.
namespace guest::cudart {
cudaError_t record(cudaError_t e) { return e; }
} // namespace guest::cudart

namespace {

struct Popped {
    cudaError_t status = cudaErrorUnknown;
    dim3 grid{0, 0, 0}, block{0, 0, 0};
    size_t shared = 0;
    cudaStream_t stream = nullptr;
};

Popped pop()
{
    Popped p;
    p.status = __cudaPopCallConfiguration(&p.grid, &p.block, &p.shared, &p.stream);
    return p;
}

cudaStream_t stream_no(uintptr_t n) { return reinterpret_cast<cudaStream_t>(n); }

// Runs the steps in order, each on its thread (0: this one, 1: a second).
void interleave(const std::vector<std::pair<int, std::function<void()>>>& steps)
{
    std::mutex mu;
    std::condition_variable cv;
    size_t next = 0;
    auto run = [&](int who) {
        for (;;) {
            std::unique_lock<std::mutex> lock(mu);
            cv.wait(lock, [&] { return next == steps.size() || steps[next].first == who; });
            if (next == steps.size())
                return;
            steps[next].second();
            ++next;
            cv.notify_all();
        }
    };
    std::thread other(run, 1);
    run(0);
    other.join();
}

TEST(CallConfiguration, EachThreadPopsWhatItPushed)
{
    Popped mine, theirs;
    interleave({
        {0, [] { ASSERT_EQ(__cudaPushCallConfiguration(dim3(3, 1, 1), dim3(64, 1, 1), 16, stream_no(0x10)), 0u); }},
        {1, [] { ASSERT_EQ(__cudaPushCallConfiguration(dim3(7, 2, 1), dim3(32, 4, 1), 0, stream_no(0x20)), 0u); }},
        {0, [&] { mine = pop(); }},
        {1, [&] { theirs = pop(); }},
    });
    ASSERT_EQ(mine.status, cudaSuccess);
    EXPECT_EQ(mine.grid.x, 3u);
    EXPECT_EQ(mine.block.x, 64u);
    EXPECT_EQ(mine.shared, 16u);
    EXPECT_EQ(mine.stream, stream_no(0x10));
    ASSERT_EQ(theirs.status, cudaSuccess);
    EXPECT_EQ(theirs.grid.x, 7u);
    EXPECT_EQ(theirs.grid.y, 2u);
    EXPECT_EQ(theirs.block.y, 4u);
    EXPECT_EQ(theirs.stream, stream_no(0x20));
}

TEST(CallConfiguration, AThreadThatPushedNothingHasNothingToPop)
{
    Popped theirs;
    Popped mine;
    interleave({
        {0, [] { ASSERT_EQ(__cudaPushCallConfiguration(dim3(1, 1, 1), dim3(1, 1, 1), 0, nullptr), 0u); }},
        {1, [&] { theirs = pop(); }},
        {0, [&] { mine = pop(); }},
    });
    EXPECT_EQ(theirs.status, cudaErrorMissingConfiguration);
    EXPECT_EQ(mine.status, cudaSuccess);
    EXPECT_EQ(pop().status, cudaErrorMissingConfiguration);
}

// The depth limit (16) is each thread's: one thread's full stack does not
// refuse another's push.
TEST(CallConfiguration, EachThreadHasItsOwnDepth)
{
    int pushed = 0;
    while (__cudaPushCallConfiguration(dim3(1, 1, 1), dim3(1, 1, 1), 0, nullptr) == 0)
        ++pushed;
    EXPECT_EQ(pushed, 16);
    unsigned other = 1;
    Popped other_pop;
    std::thread t([&] {
        other = __cudaPushCallConfiguration(dim3(5, 1, 1), dim3(1, 1, 1), 0, nullptr);
        other_pop = pop();
    });
    t.join();
    EXPECT_EQ(other, 0u);
    EXPECT_EQ(other_pop.grid.x, 5u);
    for (int i = 0; i < pushed; ++i)
        EXPECT_EQ(pop().status, cudaSuccess);
    EXPECT_EQ(pop().status, cudaErrorMissingConfiguration);
}

} // namespace
