// cuStreamBatchMemOp: a batch of the stream memory operations, each sent as
// the single call it names (in stream order, as the batch runs them).
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/platform/api_lock.h"

namespace {

// The batch's flags must be 0; each operation is checked before any is sent,
// so a bad one leaves the stream as it was.
CUresult batch(CUstream stream, unsigned count, const CUstreamBatchMemOpParams* ops, unsigned flags)
{
    if (flags != 0 || count == 0 || ops == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < count; ++i) {
        switch (ops[i].operation) {
        case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        case CU_STREAM_MEM_OP_WRITE_VALUE_64:
            break;
        case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
            if (ops[i].flushRemoteWrites.flags != 0)
                return CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_STREAM_MEM_OP_BARRIER:
            return CUDA_ERROR_NOT_SUPPORTED;
        default:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    for (unsigned i = 0; i < count; ++i) {
        const CUstreamBatchMemOpParams& op = ops[i];
        CUresult r = CUDA_SUCCESS;
        switch (op.operation) {
        case CU_STREAM_MEM_OP_WAIT_VALUE_32:
            r = cuStreamWaitValue32(stream, op.waitValue.address, op.waitValue.value, op.waitValue.flags);
            break;
        case CU_STREAM_MEM_OP_WRITE_VALUE_32:
            r = cuStreamWriteValue32(stream, op.writeValue.address, op.writeValue.value, op.writeValue.flags);
            break;
        case CU_STREAM_MEM_OP_WAIT_VALUE_64:
            r = cuStreamWaitValue64(stream, op.waitValue.address, op.waitValue.value64, op.waitValue.flags);
            break;
        case CU_STREAM_MEM_OP_WRITE_VALUE_64:
            r = cuStreamWriteValue64(stream, op.writeValue.address, op.writeValue.value64, op.writeValue.flags);
            break;
        default: // a flush: no peer writes into a VM's memory to wait for
            break;
        }
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuStreamBatchMemOp, 8000);
extern "C" CUresult cuStreamBatchMemOp(CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                                       unsigned int flags)
{
    GUEST_API_LOCK();
    return batch(stream, count, paramArray, flags);
}

KVMGPU_DRIVER_ENTRY_AS(cuStreamBatchMemOp, 11070, cuStreamBatchMemOp_v2);
extern "C" CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                                          unsigned int flags)
{
    GUEST_API_LOCK();
    return batch(stream, count, paramArray, flags);
}
