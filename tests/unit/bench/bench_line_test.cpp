#include "kvmtool-gpu/bench/bench_line.h"

#include <gtest/gtest.h>

using kvmgpu::bench::parse_bench_line;

TEST(BenchLine, ParsesTagAndFieldsInOrder) {
    auto l = parse_bench_line("BW dir=htod bytes=4096 status=ok\n", {"BW", "BW-DONE"});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->tag, "BW");
    ASSERT_EQ(l->fields.size(), 3u);
    EXPECT_EQ(l->fields[0].first, "dir");
    EXPECT_EQ(l->get("dir"), "htod");
    EXPECT_EQ(l->u64("bytes"), 4096u);
    EXPECT_EQ(l->get("absent", "x"), "x");
    EXPECT_EQ(l->find("absent"), nullptr);
}

TEST(BenchLine, OtherLinesAreNotResults) {
    EXPECT_FALSE(parse_bench_line("bandwidth: device \"H100\"", {"BW"}));
    EXPECT_FALSE(parse_bench_line("BWX a=1", {"BW"}));
    EXPECT_FALSE(parse_bench_line("", {"BW"}));
    EXPECT_FALSE(parse_bench_line("   \n", {"BW"}));
    EXPECT_FALSE(parse_bench_line("BW dir=htod stray", {"BW"})); // a word without '='
    EXPECT_FALSE(parse_bench_line("BW =x", {"BW"}));
}

TEST(BenchLine, EmptyValuesAndWhitespace) {
    auto l = parse_bench_line("  BW-DONE\ta=  b=7 \r\n", {"BW-DONE"});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->get("a", "def"), "");
    EXPECT_EQ(l->u64("b"), 7u);
    EXPECT_FALSE(l->u64("a"));
}

TEST(BenchLine, NumbersMustBePlainDecimal) {
    auto l = parse_bench_line("BW a=12x b=-1 c=0x10 d=18446744073709551615 e=18446744073709551616", {"BW"});
    ASSERT_TRUE(l);
    EXPECT_FALSE(l->u64("a"));
    EXPECT_FALSE(l->u64("b"));
    EXPECT_FALSE(l->u64("c"));
    EXPECT_EQ(l->u64("d"), UINT64_MAX);
    EXPECT_FALSE(l->u64("e"));
}

TEST(BenchLine, Fractions) {
    auto l = parse_bench_line("BW trial=2/3 n=10/96 a=2/ b=/3 c=1/2/3 d=x/3 e=3", {"BW"});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->fraction("trial"), (std::pair<uint64_t, uint64_t>{2, 3}));
    EXPECT_EQ(l->fraction("n"), (std::pair<uint64_t, uint64_t>{10, 96}));
    for (const char* bad : {"a", "b", "c", "d", "e", "absent"}) EXPECT_FALSE(l->fraction(bad)) << bad;
}
