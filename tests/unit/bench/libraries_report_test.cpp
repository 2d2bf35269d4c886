#include "kvmtool-gpu/bench/libraries_report.h"

#include <gtest/gtest.h>

using namespace kvmgpu::bench;

namespace {

// A gemm row: `tflop` TFLOP in one second of events.
LibraryResult gemm(const std::string& source, uint64_t n, double tflop, const std::string& status = "ok") {
    LibraryResult r;
    r.source = source;
    r.metric = "sgemm";
    r.n = n;
    r.reps = 1;
    r.flop = tflop * 1e12;
    r.event_ns = 1'000'000'000;
    r.wall_ns = 1'000'000'000;
    r.status = status;
    return r;
}

} // namespace

TEST(LibrariesReport, EachGuestLibraryIsComparedWithNative) {
    const std::vector<LibraryResult> all = {gemm("native", 4096, 50), gemm("guest", 4096, 49.75),
                                            gemm(kNvidiaGuestSource, 4096, 45)};
    ASSERT_TRUE(library_ratio(all, all[1]));
    EXPECT_NEAR(*library_ratio(all, all[1]), 0.995, 1e-9);
    EXPECT_NEAR(*library_ratio(all, all[2]), 0.9, 1e-9);
    const std::string md = libraries_markdown(all, BenchMeta{});
    EXPECT_NE(md.find("| forwarded | sgemm | 4096 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| NVIDIA's | sgemm | 4096 |"), std::string::npos) << md;
    // 99.5% meets the 99% target; 90% misses it.
    EXPECT_NE(md.find("99.5% | >= 99% | met |"), std::string::npos) << md;
    EXPECT_NE(md.find("90.0% | >= 99% | MISSED |"), std::string::npos) << md;
    // The header, its rule and one row per guest library: native is a column.
    size_t rows = 0;
    for (size_t at = md.find("\n| "); at != std::string::npos; at = md.find("\n| ", at + 1)) ++rows;
    EXPECT_EQ(rows, 4u) << md;
}

TEST(LibrariesReport, AFailedGuestRowSaysWhy) {
    const std::vector<LibraryResult> all = {gemm("native", 4096, 50), gemm(kNvidiaGuestSource, 4096, 0, "cublas_error")};
    EXPECT_FALSE(library_ratio(all, all[1]));
    EXPECT_NE(libraries_markdown(all, BenchMeta{}).find("| cublas_error |"), std::string::npos);
}
