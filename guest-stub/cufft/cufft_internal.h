// What the guest cuFFT's files share: the table of cufftHandle slots (a
// cufftHandle is an int in cufft.h), each naming a VM plan once made, and
// the status a vGPU result maps to.
#pragma once

#include <cufft.h>

#include "guest-stub/cuda/vgpu_client.h"

namespace guest::cufft {

constexpr int kMaxPlans = 1024;

struct PlanSlot {
    bool taken = false;           // cufftCreate'd or planned; false: free
    uint64_t vgpu = 0;            // the VM plan once made (0: created, not planned)
    bool auto_allocation = true;  // cufftSetAutoAllocation
    size_t work = 0;              // the plan's work area, as the VMM reported it
    cudaStream_t stream = nullptr; // cufftSetStream's, kept for a plan made later
    bool stream_set = false;
};
extern PlanSlot g_plans[kMaxPlans];

inline PlanSlot* slot_of(cufftHandle h) { return h >= 0 && h < kMaxPlans && g_plans[h].taken ? &g_plans[h] : nullptr; }
// A free slot taken, or -1 when all are.
int take_slot();
cufftResult result_of(CUresult r);
// VGPU_OP_FFT_SET_STREAM of a made plan's slot.
cufftResult send_stream(const PlanSlot& s);
// Makes the VM plan of a created slot (VGPU_OP_FFT_PLAN_MANY); n, embeds
// as cufftMakePlanMany64's (embeds both null: the basic layout).
cufftResult make_plan(cufftHandle h, int rank, const long long* n, const long long* inembed, long long istride,
                      long long idist, const long long* onembed, long long ostride, long long odist, cufftType type,
                      long long batch, size_t* work);

} // namespace guest::cufft
