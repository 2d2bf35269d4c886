// Occupancy: how many blocks of a kernel one multiprocessor holds at once.
// The VMM asks its driver for each (kernel, block size, shared memory)
// (VGPU_OP_FUNC_OCCUPANCY); the block-size search and its shared-memory
// callback run here, in the guest.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

// An attribute of the current context's device.
CUresult current_device_attribute(CUdevice_attribute a, int* out)
{
    CUdevice dev = 0;
    if (CUresult r = cuCtxGetDevice(&dev))
        return r;
    return cuDeviceGetAttribute(out, a, dev);
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000);
extern "C" CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func,
                                                                         int blockSize, size_t dynamicSMemSize,
                                                                         unsigned int flags)
{
    GUEST_API_LOCK();
    if (numBlocks == nullptr || blockSize <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_FUNC_OCCUPANCY>(vgpu_args_occupancy{.function = handle_bits(func),
                                   .block_threads = static_cast<uint64_t>(blockSize),
                                   .shared_bytes = dynamicSMemSize,
                                   .flags = flags});
    return call_result(c, numBlocks);
}

KVMGPU_DRIVER_ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050);
extern "C" CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                                size_t dynamicSMemSize)
{
    GUEST_API_LOCK();
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                CU_OCCUPANCY_DEFAULT);
}

KVMGPU_DRIVER_ENTRY(cuOccupancyAvailableDynamicSMemPerBlock, 10020);
extern "C" CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func, int numBlocks,
                                                            int blockSize)
{
    GUEST_API_LOCK();
    if (dynamicSmemSize == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    // The ints as they are (their bits): the driver judges zero and negative counts.
    const Call c = command<VGPU_OP_FUNC_AVAILABLE_SHARED>(vgpu_args_available_shared{
        .function = handle_bits(func), .blocks = static_cast<uint32_t>(numBlocks),
        .block_threads = static_cast<uint32_t>(blockSize)});
    return call_result(c, dynamicSmemSize);
}

// Candidates from the largest block allowed down, the largest first among
// equals: the limit itself, then every multiple of the warp size below it.
// Stops early once a candidate fills a multiprocessor's threads.
KVMGPU_DRIVER_ENTRY(cuOccupancyMaxPotentialBlockSizeWithFlags, 7000);
extern "C" CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                                              CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                              size_t dynamicSMemSize, int blockSizeLimit,
                                                              unsigned int flags)
{
    GUEST_API_LOCK();
    if (minGridSize == nullptr || blockSize == nullptr || blockSizeLimit < 0)
        return CUDA_ERROR_INVALID_VALUE;
    int func_max = 0, dev_max = 0, warp = 0, sms = 0, per_sm = 0;
    if (CUresult r = cuFuncGetAttribute(&func_max, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, func))
        return r;
    if (CUresult r = current_device_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &dev_max))
        return r;
    if (CUresult r = current_device_attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, &warp))
        return r;
    if (CUresult r = current_device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms))
        return r;
    if (CUresult r = current_device_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &per_sm))
        return r;
    int limit = func_max < dev_max ? func_max : dev_max;
    if (blockSizeLimit > 0 && blockSizeLimit < limit)
        limit = blockSizeLimit;
    if (warp <= 0)
        warp = 32;
    int best_block = 0, best_blocks = 0;
    long best_threads = 0;
    for (int b = limit; b > 0; b = (b % warp != 0) ? b - b % warp : b - warp) {
        const size_t shared = blockSizeToDynamicSMemSize != nullptr ? blockSizeToDynamicSMemSize(b) : dynamicSMemSize;
        int n = 0;
        if (CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, func, b, shared, flags))
            return r;
        if (static_cast<long>(n) * b > best_threads) {
            best_threads = static_cast<long>(n) * b;
            best_block = b;
            best_blocks = n;
        }
        if (per_sm > 0 && best_threads >= per_sm)
            break;
    }
    *blockSize = best_block;
    *minGridSize = best_blocks * sms;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuOccupancyMaxPotentialBlockSize, 6050);
extern "C" CUresult cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                                     CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                     size_t dynamicSMemSize, int blockSizeLimit)
{
    GUEST_API_LOCK();
    return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                     dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

namespace {

// A CUlaunchConfig's shape and cluster attribute as the vGPU takes them.
CUresult cluster_question(uint16_t op, int* out, CUfunction func, const CUlaunchConfig* config)
{
    if (out == nullptr || config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    vgpu_args_cluster_occupancy a{.function = handle_bits(func),
                                  .grid = {config->gridDimX, config->gridDimY, config->gridDimZ},
                                  .block = {config->blockDimX, config->blockDimY, config->blockDimZ},
                                  .shared_bytes = config->sharedMemBytes,
                                  .cluster = {0, 0, 0}};
    for (unsigned i = 0; i < config->numAttrs; ++i) {
        if (config->attrs[i].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            continue;
        a.cluster[0] = config->attrs[i].value.clusterDim.x;
        a.cluster[1] = config->attrs[i].value.clusterDim.y;
        a.cluster[2] = config->attrs[i].value.clusterDim.z;
        if ((a.cluster[0] | a.cluster[1] | a.cluster[2]) == 0)
            return CUDA_ERROR_INVALID_CLUSTER_SIZE; // all zero means "none" on the ring
    }
    Call c;
    c.op = op;
    c.set_args(a);
    return call_result(c, out);
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuOccupancyMaxActiveClusters, 11070);
extern "C" CUresult cuOccupancyMaxActiveClusters(int* numClusters, CUfunction func, const CUlaunchConfig* config)
{
    GUEST_API_LOCK();
    return cluster_question(VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, numClusters, func, config);
}

KVMGPU_DRIVER_ENTRY(cuOccupancyMaxPotentialClusterSize, 11070);
extern "C" CUresult cuOccupancyMaxPotentialClusterSize(int* clusterSize, CUfunction func, const CUlaunchConfig* config)
{
    GUEST_API_LOCK();
    return cluster_question(VGPU_OP_FUNC_MAX_CLUSTER_SIZE, clusterSize, func, config);
}
