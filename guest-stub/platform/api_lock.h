// One guest CUDA call at a time. A Linux guest's threads share the one
// vGPU connection (the ring's producer side, the SG-list pool) and the
// library's tables, so every public cu*/cuda*/vgpu* function (but the two
// that only compute a value: cudaCreateChannelDesc, vgpuBackendName) takes
// this recursive lock for its whole length (a runtime call that makes
// Driver API calls takes it again), and so do nvcc's entry points that reach
// shared state (__cudaLaunchKernel, __cudaGetKernel,
// __cudaUnregisterFatBinary). The others need none: registration runs
// before main, and the <<<...>>> configuration is per thread
// (cudart/call_configuration.cpp). A host function the library runs on the
// caller's thread (a stream callback, cuLaunchHostFunc) runs with it
// released, so that it may wait for threads that make CUDA calls.
// Freestanding guests have one thread: there both are empty.
#pragma once

namespace guest::platform {

void api_lock();
void api_unlock();
// Releases every level this thread holds; returns how many.
unsigned api_release_all();
void api_reacquire(unsigned depth);

struct ApiLock {
    ApiLock() { api_lock(); }
    ~ApiLock() { api_unlock(); }
    ApiLock(const ApiLock&) = delete;
    ApiLock& operator=(const ApiLock&) = delete;
};

struct ApiUnlocked {
    ApiUnlocked() : depth(api_release_all()) {}
    ~ApiUnlocked() { api_reacquire(depth); }
    ApiUnlocked(const ApiUnlocked&) = delete;
    ApiUnlocked& operator=(const ApiUnlocked&) = delete;
    unsigned depth;
};

} // namespace guest::platform

#define GUEST_API_LOCK() const ::guest::platform::ApiLock guest_api_lock_

// State CUDA keeps per thread (the context stack, the runtime's device and
// last error, the <<<...>>> configuration stack): thread_local in the Linux build (GUEST_THREADS), plain in
// the freestanding one, which has no TLS set up.
#if defined(GUEST_THREADS)
#define GUEST_PER_THREAD thread_local
#else
#define GUEST_PER_THREAD
#endif
