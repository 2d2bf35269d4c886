// The console tags of the benchmark guests: the first word of each line a
// guest prints for the VMM's benches to read (kvmtool-gpu/bench/bench_line.h
// parses "TAG key=value ..."). The guests print them and the benches match
// them from here, so the two sides cannot drift apart. String-literal macros,
// so a guest's printf format can start with one (KVMGPU_TAG_BW " dir=%s");
// freestanding, and plain enough for nvcc (cublasBench.cu runs natively too).
#pragma once

// guest-stub/programs/bandwidth.cpp
#define KVMGPU_TAG_BW "BW"             // one copy measurement
#define KVMGPU_TAG_BW_PLAN "BW-PLAN"   // how many BW lines the guest will print
#define KVMGPU_TAG_BW_REG "BW-REG"     // what registering the pageable buffer cost
#define KVMGPU_TAG_BW_CHECK "BW-CHECK" // a round-trip data check
#define KVMGPU_TAG_BW_DONE "BW-DONE"

// guest-stub/programs/calls.cpp
#define KVMGPU_TAG_CALLS "CALLS"                     // one call measurement
#define KVMGPU_TAG_CALLS_PLAN "CALLS-PLAN"
#define KVMGPU_TAG_CALLS_CPU_BEGIN "CALLS-CPU-BEGIN" // the VMM's CPU is measured from here ...
#define KVMGPU_TAG_CALLS_CPU_END "CALLS-CPU-END"     // ... to here
#define KVMGPU_TAG_CALLS_IDLE "CALLS-IDLE"           // the guest idles from here ...
#define KVMGPU_TAG_CALLS_IDLE_DONE "CALLS-IDLE-DONE" // ... to here
#define KVMGPU_TAG_CALLS_DONE "CALLS-DONE"

// guest-stub/samples/cublasBench.cu (a guest and, built by nvcc, its native twin)
#define KVMGPU_TAG_BLAS "BLAS"           // one gemm or batched measurement
#define KVMGPU_TAG_BLAS_INFO "BLAS-INFO" // the cuBLAS version
#define KVMGPU_TAG_BLAS_DONE "BLAS-DONE"

// guest-stub/programs/share.cpp
#define KVMGPU_TAG_SHARE "SHARE:"            // the member's report at its end
// Set up: the common window may start. " stop=0xGPA" after it: a 32-bit word
// the VMM sets to 1 when the window has ended, and the member stops working.
#define KVMGPU_TAG_SHARE_READY "SHARE-READY"
#define KVMGPU_TAG_SHARE_DONE "SHARE-DONE"

// guest-stub/programs/pointer_chase.cpp (the TLB study, tlb-study/guest_chase.h)
#define KVMGPU_TAG_CHASE "CHASE"           // one working set's chase
#define KVMGPU_TAG_CHASE_DONE "CHASE-DONE"

// guest-stub/programs/multigpu.cpp and p2p.cpp: every line they print
// carries the tag; the benches read those with result fields.
#define KVMGPU_TAG_MULTIGPU "multigpu:"
#define KVMGPU_TAG_P2P "p2p:"
