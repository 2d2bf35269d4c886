// PageSize names in and out.
#include <gtest/gtest.h>

#include "memmap/backing.h"

using memmap::PageSize;

namespace {

TEST(PageSize, NamesAndBytes) {
    EXPECT_EQ(memmap::to_string(PageSize::k4K), "4K");
    EXPECT_EQ(memmap::to_string(PageSize::k2M), "2M");
    EXPECT_EQ(memmap::to_string(PageSize::k1G), "1G");
    EXPECT_EQ(memmap::bytes(PageSize::k4K), 4096u);
    EXPECT_EQ(memmap::bytes(PageSize::k2M), 2097152u);
    EXPECT_EQ(memmap::bytes(PageSize::k1G), 1073741824u);
}

TEST(PageSize, ParsesNamesInEitherCaseAndExactByteCounts) {
    const std::pair<const char*, PageSize> good[] = {
        {"4K", PageSize::k4K},   {"4k", PageSize::k4K},      {"2M", PageSize::k2M},
        {"2m", PageSize::k2M},   {"1G", PageSize::k1G},      {"1g", PageSize::k1G},
        {"4096", PageSize::k4K}, {"2097152", PageSize::k2M}, {"1073741824", PageSize::k1G},
    };
    for (const auto& [text, want] : good) {
        PageSize got = want == PageSize::k4K ? PageSize::k1G : PageSize::k4K; // anything else
        EXPECT_TRUE(memmap::parse_page_size(text, &got)) << text;
        EXPECT_EQ(got, want) << text;
    }
}

TEST(PageSize, RejectsEverythingElseAndLeavesOutputAlone) {
    for (const char* text : {"", "4", "K", "4KB", "4KiB", "3K", "2G", "1M", "k4", "4K ", " 4K", "4096 ", "2097151",
                             "-4096", "0x1000", "40960", "+4096", "4\xcb"}) {
        PageSize got = PageSize::k2M;
        EXPECT_FALSE(memmap::parse_page_size(text, &got)) << text;
        EXPECT_EQ(got, PageSize::k2M) << text;
    }
}

} // namespace
