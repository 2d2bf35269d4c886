// MD2 (guest-stub/libcuda/md2.h), under the integrity check's HMAC, against
// RFC 1319's test vectors.
#include "guest-stub/libcuda/md2.h"

#include <gtest/gtest.h>
#include <stdio.h>

#include <string>

namespace {

std::string md2_hex(const std::string& text)
{
    guest::libcuda::Md2 md;
    md.add(text.data(), text.size());
    unsigned char digest[16];
    md.finish(digest);
    std::string hex;
    char byte[3];
    for (unsigned char b : digest) {
        snprintf(byte, sizeof byte, "%02x", b);
        hex += byte;
    }
    return hex;
}

TEST(Md2, Rfc1319TestVectors)
{
    EXPECT_EQ(md2_hex(""), "8350e5a3e24c153df2275c9f80692773");
    EXPECT_EQ(md2_hex("a"), "32ec01ec4a6dac72c0ab96fb34c0b5d1");
    EXPECT_EQ(md2_hex("abc"), "da853b0d3f88d99b30283a69e6ded6bb");
    EXPECT_EQ(md2_hex("message digest"), "ab4f496bfb2a530b219ff33031fe06b0");
    EXPECT_EQ(md2_hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
              "d5976f79d83d3a0dc9806c3c66f3efd8");
}

} // namespace
