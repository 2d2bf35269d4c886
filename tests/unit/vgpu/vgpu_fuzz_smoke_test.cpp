// The fuzz target's body (tests/fuzz) on generated hostile rings: opcodes
// in and out of range, arguments from a pool of edge values (0, ~0, the
// end of RAM, fake device addresses, wrap-arounds), payloads with launch
// parameter buffers, random parameter descriptors and names. Runs in every build; the libFuzzer
// binary explores further where clang is available.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/abi/vgpu_blas_abi.h"
#include "tests/fuzz/vgpu_fuzz_body.h"

namespace kvmgpu::vgpu {
namespace {

// What each argument of an opcode is (see vgpu_abi.h); "" for none.
const char* arg_shape(uint16_t op) {
    switch (op) {
    case VGPU_OP_MEM_ALLOC: return "N";
    case VGPU_OP_MEM_FREE: return "D";
    case VGPU_OP_MEMCPY_HTOD: return "DGNS";
    case VGPU_OP_MEMCPY_DTOH: return "GDNS";
    case VGPU_OP_MEMCPY_DTOD: return "DDNS";
    case VGPU_OP_MEMCPY_HTOD_SG:
    case VGPU_OP_MEMCPY_DTOH_SG: return "DGCSK";
    case VGPU_OP_MEMSET_D8:
    case VGPU_OP_MEMSET_D32: return "DVNS";
    case VGPU_OP_GUEST_RAM_DEVICE_PTR: return "GN";
    case VGPU_OP_MODULE_LOAD_DATA: return "GN";
    case VGPU_OP_MODULE_UNLOAD:
    case VGPU_OP_MODULE_GET_FUNCTION: return "M";
    case VGPU_OP_LAUNCH_KERNEL_PACKED: return "FSddd" "p";
    case VGPU_OP_STREAM_SYNCHRONIZE:
    case VGPU_OP_STREAM_DESTROY: return "S";
    case VGPU_OP_EVENT_RECORD: return "ES";
    case VGPU_OP_EVENT_SYNCHRONIZE:
    case VGPU_OP_EVENT_DESTROY: return "E";
    case VGPU_OP_EVENT_ELAPSED_TIME: return "EE";
    case VGPU_OP_BLAS_DESTROY: return "B";
    case VGPU_OP_BLAS_SET_STREAM: return "BS";
    case VGPU_OP_BLAS_SET_MATH_MODE: return "BV";
    case VGPU_OP_BLAS_SET_WORKSPACE: return "BDN";
    case VGPU_OP_RAND_CREATE: return "T";
    case VGPU_OP_RAND_DESTROY: return "R";
    case VGPU_OP_RAND_SET_STREAM: return "RS";
    case VGPU_OP_RAND_SET_SEED: return "RV";
    case VGPU_OP_RAND_GENERATE: return "RDNk";
    case VGPU_OP_FFT_PLAN: return "rnnnfn";
    case VGPU_OP_FFT_DESTROY: return "P";
    case VGPU_OP_FFT_SET_STREAM: return "PS";
    case VGPU_OP_FFT_EXEC: return "PDDfi";
    case VGPU_OP_RAND_SET_OFFSET: return "QV";
    case VGPU_OP_RAND_SET_ORDERING: return "Qo";
    case VGPU_OP_RAND_SET_DIMENSIONS: return "Qm";
    case VGPU_OP_RAND_GET_TABLE: return "tDN";
    case VGPU_OP_FFT_SET_WORK_AREA: return "PD";
    }
    return "";
}

bool blas_call(uint16_t op) {
    return op == VGPU_OP_BLAS_LEVEL1 || op == VGPU_OP_BLAS_LEVEL2 || op == VGPU_OP_BLAS_GEMM || op == VGPU_OP_BLAS_LEVEL3;
}

// A plausible cuBLAS call for `op` (vgpu_blas_abi.h): the harness's handle,
// a routine of the opcode (mostly), small dimensions and leading
// dimensions, operands in its allocation (sometimes past it, or anywhere).
template <class Pick>
uint32_t blas_payload(uint16_t op, std::mt19937_64& rng, uint8_t* payload, Pick pick) {
    auto small = [&] { return static_cast<int32_t>(rng() % 8 ? rng() % 24 : rng()); };
    auto dptr = [&] { return rng() % 4 ? fuzz::kMagic | rng() % 64 : pick(); };
    auto matrix = [&] { return vgpu_blas_matrix{dptr(), rng() % 8 ? int64_t(rng() % 24) : int64_t(pick()), int64_t(rng() % 600)}; };
    auto vector = [&] { return vgpu_blas_vector{dptr(), rng() % 8 ? int64_t(rng() % 5) - 2 : int64_t(pick())}; };
    const uint32_t types[] = {VGPU_BLAS_R_32F, VGPU_BLAS_R_64F, VGPU_BLAS_C_32F, VGPU_BLAS_C_64F, VGPU_BLAS_R_16F, 77};
    const uint32_t type = types[rng() % std::size(types)];
    vgpu_blas_head head{fuzz::kMagic | 6 << 8, 0, static_cast<uint32_t>(rng() % 4 ? 0 : rng() % 3)};
    vgpu_blas_scalar alpha{}, beta{};
    alpha.dptr = head.flags ? dptr() : 0x3ff0000000000000ull; // 1.0 as a double (its low half 0.0f)
    beta.dptr = head.flags ? dptr() : 0;
    auto put = [&](const auto& c) {
        std::memcpy(payload, &c, sizeof c);
        return static_cast<uint32_t>(rng() % 8 ? sizeof c : rng() % (VGPU_PAYLOAD_BYTES + 1));
    };
    if (op == VGPU_OP_BLAS_LEVEL1) {
        head.routine = static_cast<uint32_t>(rng() % 8 ? 1 + rng() % 10 : rng());
        return put(vgpu_blas_level1{head, type, small(), vector(), vector(), alpha, dptr()});
    }
    if (op == VGPU_OP_BLAS_LEVEL2) {
        head.routine = static_cast<uint32_t>(rng() % 8 ? 20 + rng() % 4 : rng());
        return put(vgpu_blas_level2{head, type, uint32_t(rng() % 4), uint32_t(rng() % 3), uint32_t(rng() % 3), small(),
                                    small(), alpha, beta, matrix(), vector(), vector()});
    }
    if (op == VGPU_OP_BLAS_LEVEL3) {
        head.routine = static_cast<uint32_t>(rng() % 8 ? 40 + rng() % 3 : rng());
        return put(vgpu_blas_level3{head, type, uint32_t(rng() % 3), uint32_t(rng() % 3), uint32_t(rng() % 3),
                                    uint32_t(rng() % 4), uint32_t(rng() % 4), small(), small(), small(), alpha, beta,
                                    matrix(), matrix(), matrix()});
    }
    head.routine = static_cast<uint32_t>(rng() % 8 ? 30 + rng() % 2 : rng());
    const uint32_t computes[] = {0, VGPU_BLAS_COMPUTE_32F, VGPU_BLAS_COMPUTE_64F, VGPU_BLAS_COMPUTE_16F, 99};
    return put(vgpu_blas_gemm{head, uint32_t(rng() % 4), uint32_t(rng() % 4), small(), small(), small(),
                              static_cast<int32_t>(rng() % 4), uint32_t(rng() % 4), type, type,
                              rng() % 8 ? type : types[rng() % std::size(types)], computes[rng() % std::size(computes)],
                              rng() % 4 ? -1 : static_cast<int32_t>(rng() % 120), alpha, beta, matrix(), matrix(),
                              matrix()});
}

// A plausible cufftMakePlanMany64 (vgpu_fft_plan_many): small sizes, an
// advanced layout half the time, strides, distances and embeds mostly
// small (sometimes negative or huge), flags mostly known.
template <class Pick>
uint32_t fft_plan_payload(std::mt19937_64& rng, uint8_t* payload, Pick pick) {
    auto small = [&] { return rng() % 8 ? int64_t(rng() % 20) - 1 : int64_t(pick()); };
    const uint32_t types[] = {0x29, 0x2a, 0x2c, 0x69, 0x6a, 0x6c, 0x30};
    vgpu_fft_plan_many m{};
    m.rank = static_cast<uint32_t>(rng() % 8 ? 1 + rng() % 3 : rng() % 6);
    m.type = types[rng() % std::size(types)];
    for (int d = 0; d < 3; ++d) m.n[d] = 1 + rng() % 12, m.inembed[d] = small(), m.onembed[d] = small();
    m.istride = small(), m.idist = small(), m.ostride = small(), m.odist = small();
    m.batch = rng() % 8 ? 1 + rng() % 4 : int64_t(pick());
    m.flags = static_cast<uint32_t>(rng() % 8 ? rng() % 4 : rng());
    std::memcpy(payload, &m, sizeof m);
    return static_cast<uint32_t>(rng() % 8 ? sizeof m : rng() % (VGPU_PAYLOAD_BYTES + 1));
}

std::vector<uint8_t> hostile_input(std::mt19937_64& rng) {
    constexpr uint32_t kEntries = 8; // as vgpu_fuzz_body.cpp
    const uint64_t pool[] = {0,           1,          16,          4096,          1ull << 20,         (2ull << 20) - 8,
                             2ull << 20,  64 << 10,   (64 << 10) + 4096, ~0ull,   ~0ull - 4095,       1ull << 63,
                             0x0D00'0000'0000'0000ull, 0x0E00'0000'0000'0000ull, 0x0D00'0000'0001'0000ull, 0x4d00'0000'0000'0001ull,
                             0x5300'0000'0000'0001ull, 0x4600'0000'0000'0001ull, VGPU_MAX_SG_ENTRIES, VGPU_MAX_SG_ENTRIES + 1ull};
    // Half the time one of the harness's live handles / addresses.
    auto magic = [&] { return fuzz::kMagic | (rng() % 6) << 8 | (rng() % 4 ? rng() % 16 : rng() % 256); };
    auto pick = [&] {
        if (rng() % 2) return magic();
        return rng() % 4 ? pool[rng() % std::size(pool)] + (rng() % 3 == 0 ? rng() % 64 : 0) : rng();
    };

    auto typed = [&](char kind) -> uint64_t {
        switch (kind) {
        case 'D': return fuzz::kMagic | (rng() % 3 ? 0 : 5) << 8 | rng() % 16; // allocation or zero-copy
        case 'G': return (64 << 10) + rng() % (64 << 10);                     // guest data
        case 'N': return rng() % 4096;                                         // a size
        case 'C': return 1 + rng() % 8;                                        // sg entries
        case 'K': return rng() % VGPU_SG_STRATEGY_COUNT_;
        case 'S': return rng() % 2 ? 0 : fuzz::kMagic | 1 << 8;
        case 'E': return fuzz::kMagic | 4 << 8;
        case 'M': return fuzz::kMagic | 2 << 8;
        case 'F': return fuzz::kMagic | 3 << 8;
        case 'd': return (1 + rng() % 4) | (1 + rng() % 4) << 32;            // grid/block dims
        case 'p': return uint64_t{28} << 32;                                   // the reference kernels' buffer bytes
        case 'V': return rng() % 256;
        case 'B': return fuzz::kMagic | 6 << 8; // the harness's cuBLAS handle
        case 'T': return rng() % 2 ? 100 + rng() % 106 : rng() % 300; // a curandRngType_t, or not
        case 'Q': return fuzz::kMagic | (rng() % 2 ? 12 : 7) << 8; // its Sobol32 or its pseudo-random generator
        case 'o': return rng() % 4 ? 100 + rng() % 6 : rng() % 2 ? 201 : rng();     // a curandOrdering_t, or not
        case 'm': return rng() % 4 ? rng() % 5 : rng() % 2 ? 20000 + rng() % 3 : rng(); // dimensions
        case 't': { const uint64_t t[] = {1, 2, 3, 101, 102, 103, 104}; return t[rng() % 7]; } // a table, or not
        case 'k': return rng() % (VGPU_RAND_KIND_COUNT_ + 1);
        case 'R': return fuzz::kMagic | (rng() % 2 ? 12 : 7) << 8; // one of its cuRAND generators
        case 'P': return fuzz::kMagic | 8 << 8; // its cuFFT plan (C2C, 64 points)
        case 'r': return rng() % 5;             // an FFT rank, or not
        case 'n': return rng() % 4 ? 1 + rng() % 64 : rng();
        case 'f': { const uint64_t t[] = {0x29, 0x2a, 0x2c, 0x69, 0x6a, 0x6c, 0x30}; return t[rng() % 7]; }
        case 'i': return rng() % 3 ? (rng() % 2 ? ~0ull : 1) : rng() % 4;
        }
        return 0;
    };

    std::vector<uint8_t> in(1 + vgpu_ring_bytes(kEntries) + 8192);
    in[0] = static_cast<uint8_t>(rng());
    uint8_t* ring = in.data() + 1;
    for (uint32_t slot = 0; slot < kEntries; ++slot) {
        vgpu_command c{};
        const uint16_t blas_ops[] = {VGPU_OP_BLAS_CREATE, VGPU_OP_BLAS_DESTROY, VGPU_OP_BLAS_SET_STREAM,
                                     VGPU_OP_BLAS_SET_MATH_MODE, VGPU_OP_BLAS_SET_WORKSPACE, VGPU_OP_BLAS_GET_VERSION,
                                     VGPU_OP_BLAS_LEVEL1, VGPU_OP_BLAS_LEVEL2, VGPU_OP_BLAS_GEMM, VGPU_OP_BLAS_LEVEL3,
                                     VGPU_OP_RAND_CREATE, VGPU_OP_RAND_DESTROY, VGPU_OP_RAND_SET_STREAM,
                                     VGPU_OP_RAND_SET_SEED, VGPU_OP_RAND_GENERATE, VGPU_OP_FFT_PLAN,
                                     VGPU_OP_FFT_DESTROY, VGPU_OP_FFT_SET_STREAM, VGPU_OP_FFT_EXEC,
                                     VGPU_OP_RAND_SET_OFFSET, VGPU_OP_RAND_SET_ORDERING, VGPU_OP_RAND_SET_DIMENSIONS,
                                     VGPU_OP_RAND_GET_TABLE, VGPU_OP_FFT_PLAN_MANY, VGPU_OP_FFT_SET_WORK_AREA};
        // Opcodes 0..VGPU_OP_MAX_ are mostly unused numbers: the library calls are picked on purpose.
        c.opcode = static_cast<uint16_t>(rng() % 3 == 0 ? blas_ops[rng() % std::size(blas_ops)]
                                         : rng() % 8 ? rng() % 80 : rng() % 8 ? rng() % VGPU_OP_MAX_ : rng());
        c.flags = rng() % 8 ? rng() % 2 : static_cast<uint16_t>(rng());
        c.payload_len = static_cast<uint32_t>(rng() % 8 ? rng() % (VGPU_PAYLOAD_BYTES + 1) : rng());
        c.seq = rng();
        // Mostly arguments of the right kind for the opcode, so commands
        // get past the first checks and into the backend.
        const std::string_view shape = arg_shape(c.opcode);
        for (size_t a = 0; a < 6; ++a) c.arg[a] = rng() % 4 && a < shape.size() ? typed(shape[a]) : pick();
        std::memcpy(ring + vgpu_command_offset(slot), &c, sizeof c);
        uint8_t* payload = ring + vgpu_payload_offset(kEntries, slot);
        if (blas_call(c.opcode) && rng() % 4) {
            c.payload_len = blas_payload(c.opcode, rng, payload, pick);
            std::memcpy(ring + vgpu_command_offset(slot), &c, sizeof c);
        } else if (c.opcode == VGPU_OP_FFT_PLAN_MANY && rng() % 4) {
            c.payload_len = fft_plan_payload(rng, payload, pick);
            std::memcpy(ring + vgpu_command_offset(slot), &c, sizeof c);
        } else if (rng() % 2) {
            // A plausible launch's buffer: a, b, c pointers at 0, 8, 16 and n at 24.
            for (int p = 0; p < 3; ++p) {
                const uint64_t v = rng() % 4 ? fuzz::kMagic | rng() % 16 : pick();
                std::memcpy(payload + 8 * p, &v, 8);
            }
            const uint32_t n = static_cast<uint32_t>(rng() % 4 ? rng() % 5000 : rng());
            std::memcpy(payload + 24, &n, 4);
        } else {
            for (uint32_t i = 0; i < VGPU_PAYLOAD_BYTES; i += 4) { // descriptors, names, bytes
                const vgpu_param_desc d{static_cast<uint16_t>(rng() % 460), static_cast<uint16_t>(rng() % 20)};
                std::memcpy(payload + i, &d, sizeof d);
            }
            if (rng() % 2) std::memcpy(payload, "vector_add", 10);
        }
    }
    // Guest data: scatter-gather entries pointing here and there.
    uint8_t* data = ring + vgpu_ring_bytes(kEntries);
    for (size_t i = 0; i + 16 <= 8192; i += 16) {
        const vgpu_sg_entry e{pick(), rng() % 4 ? rng() % 8192 : pick()};
        std::memcpy(data + i, &e, sizeof e);
    }
    return in;
}

TEST(VgpuFuzzSmoke, HostileRingsNeverCrashTheDevice) {
    std::mt19937_64 rng(20261122);
    uint64_t commands = 0, errors = 0, allocs = 0, copied = 0, blas_calls = 0;
    for (int i = 0; i < 10000; ++i) {
        const auto in = hostile_input(rng);
        VgpuCounterSnapshot c;
        fuzz::run_one(in.data(), in.size(), &c);
        commands += c.commands, errors += c.errors, allocs += c.per_opcode[VGPU_OP_MEM_ALLOC];
        copied += c.bytes_htod + c.bytes_dtoh + c.bytes_dtod;
        for (uint16_t op : {VGPU_OP_BLAS_LEVEL1, VGPU_OP_BLAS_LEVEL2, VGPU_OP_BLAS_GEMM, VGPU_OP_BLAS_LEVEL3})
            blas_calls += c.per_opcode[op];
    }
    // The generator must get past validation sometimes, or it tests little.
    std::printf("%llu commands, %llu errors, %llu allocs, %llu bytes copied\n", (unsigned long long)commands,
                (unsigned long long)errors, (unsigned long long)allocs, (unsigned long long)copied);
    EXPECT_GT(commands, errors);
    EXPECT_GT(copied, 0u);
    std::printf("%llu cuBLAS compute calls\n", (unsigned long long)blas_calls);
    EXPECT_GT(blas_calls, 1000u);
    // Raw bytes too, including short inputs.
    for (int i = 0; i < 500; ++i) {
        std::vector<uint8_t> in(rng() % 6000);
        for (auto& b : in) b = static_cast<uint8_t>(rng());
        fuzz::run_one(in.data(), in.size());
    }
}

} // namespace
} // namespace kvmgpu::vgpu
