
// Stream-ordered allocation: every byte through the VMM's quota; the pool's
// figures follow what is in use.
void stream_ordered_calls()
{
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    CUmemoryPool pool = nullptr, same = nullptr;
    expect("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool(&pool, dev), CUDA_SUCCESS);
    expect("cuDeviceGetMemPool", cuDeviceGetMemPool(&same, dev), CUDA_SUCCESS);
    expect_true("the current pool is the default one", pool == same);
    expect("cuDeviceGetDefaultMemPool(no such device)", cuDeviceGetDefaultMemPool(&pool, 99),
           CUDA_ERROR_INVALID_DEVICE);
    cuuint64_t threshold = ~0ull;
    expect("cuMemPoolSetAttribute(release threshold)",
           cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold), CUDA_SUCCESS);
    cuuint64_t got = 0;
    expect("cuMemPoolGetAttribute(release threshold)",
           cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got), CUDA_SUCCESS);
    expect_true("the threshold reads back", got == threshold);
    expect("cuMemPoolSetAttribute(used high, not 0)", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &got),
           CUDA_ERROR_INVALID_VALUE);
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a = 0, b = 0;
    expect("cuMemAllocAsync", cuMemAllocAsync(&a, 1 << 20, s), CUDA_SUCCESS);
    expect("cuMemsetD32Async(the allocation)", cuMemsetD32Async(a, 7, (1 << 20) / 4, s), CUDA_SUCCESS);
    expect("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync(&b, 4096, pool, s), CUDA_SUCCESS);
    expect("cuMemPoolGetAttribute(used)", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &got),
           CUDA_SUCCESS);
    expect_true("used: both allocations", got == (1 << 20) + 4096);
    unsigned word = 0;
    expect("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync(&word, a + 4096, sizeof word, s), CUDA_SUCCESS);
    expect("cuMemFreeAsync", cuMemFreeAsync(a, s), CUDA_SUCCESS);
    expect_true("the free came after the stream's work", word == 7);
    expect("cuMemFreeAsync(freed)", cuMemFreeAsync(a, s), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemFreeAsync", cuMemFreeAsync(b, 0), CUDA_SUCCESS);
    expect("cuMemAllocAsync(past the quota)", cuMemAllocAsync(&a, size_t{1} << 50, s), CUDA_ERROR_OUT_OF_MEMORY);
    expect("cuMemAllocAsync(0 bytes)", cuMemAllocAsync(&a, 0, s), CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuStreamDestroy(s));
    expect("cuMemAllocAsync(destroyed stream)", cuMemAllocAsync(&a, 4096, s), CUDA_ERROR_INVALID_HANDLE);
    expect("cuMemPoolGetAttribute(used high)", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &got),
           CUDA_SUCCESS);
    expect_true("the high mark", got == (1 << 20) + 4096);
    CUmemLocation here = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    expect("cuMemPoolGetAccess(own device)", cuMemPoolGetAccess(&flags, pool, &here), CUDA_SUCCESS);
    expect_true("read-write", flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc none = {here, CU_MEM_ACCESS_FLAGS_PROT_NONE};
    expect("cuMemPoolSetAccess(own device, none)", cuMemPoolSetAccess(pool, &none, 1), CUDA_ERROR_INVALID_DEVICE);
    expect("cuMemPoolSetAttribute(bogus pool)",
           cuMemPoolSetAttribute(reinterpret_cast<CUmemoryPool>(&threshold), CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                 &threshold),
           CUDA_ERROR_INVALID_VALUE);
}
