// guest::Cmdline: key=value words, bare flags, numbers with size suffixes.
#include <gtest/gtest.h>

#include <cstring>

#include "guest-stub/runtime/cmdline.h"

namespace {

guest::Cmdline make(const char* s) { return guest::Cmdline(s, strlen(s)); }

TEST(GuestCmdline, NumbersAndDefaults)
{
    auto c = make("n=1024 size=64M hex=0x1F00 big=2G k=4k t=1T");
    EXPECT_EQ(c.get_u64("n", 0), 1024u);
    EXPECT_EQ(c.get_u64("size", 0), 64ull << 20);
    EXPECT_EQ(c.get_u64("hex", 0), 0x1F00u);
    EXPECT_EQ(c.get_u64("big", 0), 2ull << 30);
    EXPECT_EQ(c.get_u64("k", 0), 4096u);
    EXPECT_EQ(c.get_u64("t", 0), 1ull << 40);
    EXPECT_EQ(c.get_u64("missing", 77), 77u);
}

TEST(GuestCmdline, SuffixSpellings)
{
    auto c = make("a=64MB b=64MiB c=3KiB");
    EXPECT_EQ(c.get_u64("a", 0), 64ull << 20);
    EXPECT_EQ(c.get_u64("b", 0), 64ull << 20);
    EXPECT_EQ(c.get_u64("c", 0), 3ull << 10);
}

TEST(GuestCmdline, BadNumbersReportAndKeepDefault)
{
    auto c = make("x=12abc y= z=99999999999999999999 w=16E q=0x");
    for (const char* key : {"x", "y", "z", "w", "q"}) {
        bool ok = true;
        EXPECT_EQ(c.get_u64(key, 5, &ok), 5u) << key;
        EXPECT_FALSE(ok) << key;
    }
    bool ok = true;
    auto big = make("s=17179869184G"); // 2^34 G overflows
    EXPECT_EQ(big.get_u64("s", 1, &ok), 1u);
    EXPECT_FALSE(ok);
}

TEST(GuestCmdline, LastOccurrenceWinsAndKeysMatchWhole)
{
    auto c = make("n=1 nn=2 n=3");
    EXPECT_EQ(c.get_u64("n", 0), 3u);
    EXPECT_EQ(c.get_u64("nn", 0), 2u);
    EXPECT_FALSE(c.has("nnn"));
    EXPECT_FALSE(c.has("")); // an empty key never matches
}

TEST(GuestCmdline, FlagsAndBooleans)
{
    auto c = make("  verbose\tquiet=0 fast=yes slow=off odd=maybe ");
    EXPECT_TRUE(c.get_bool("verbose", false));
    EXPECT_FALSE(c.get_bool("quiet", true));
    EXPECT_TRUE(c.get_bool("fast", false));
    EXPECT_FALSE(c.get_bool("slow", true));
    bool ok = true;
    EXPECT_TRUE(c.get_bool("odd", true, &ok));
    EXPECT_FALSE(ok);
    EXPECT_TRUE(c.get_bool("absent", true));
}

TEST(GuestCmdline, Strings)
{
    auto c = make("mode=pageable name=averyveryverylongvalue empty=");
    char buf[8];
    EXPECT_STREQ(c.get_str("mode", buf, sizeof buf, "x"), "pageabl"); // truncated to 7
    EXPECT_STREQ(c.get_str("empty", buf, sizeof buf, "x"), "");
    EXPECT_STREQ(c.get_str("none", buf, sizeof buf, "dflt"), "dflt");
    guest::StrView v;
    ASSERT_TRUE(c.find("name", &v));
    EXPECT_EQ(v.len, strlen("averyveryverylongvalue"));
    EXPECT_TRUE(v.equals("averyveryverylongvalue"));
    EXPECT_FALSE(v.equals("averyvery"));
    guest::StrView two_m{"2m", 2};
    EXPECT_TRUE(two_m.equals_nocase("2M"));
}

TEST(GuestCmdline, LengthBoundsTheText)
{
    const char text[] = "a=1 b=2";
    guest::Cmdline c(text, 3); // only "a=1"
    EXPECT_EQ(c.get_u64("a", 0), 1u);
    EXPECT_FALSE(c.has("b"));
    guest::Cmdline nul("a=1\0b=2", 7); // stops at the NUL
    EXPECT_FALSE(nul.has("b"));
    guest::Cmdline none(nullptr, 10);
    EXPECT_FALSE(none.has("a"));
    EXPECT_EQ(none.length(), 0u);
}

} // namespace
