// MD2 (RFC 1319): the hash under the integrity check's HMAC
// (integrity_check.cpp). Header-only, so the unit test checks it against the
// RFC's test vectors.
#pragma once

#include <stddef.h>
#include <string.h>

namespace guest::libcuda {

// MD2's substitution table (RFC 1319), from the digits of pi.
constexpr unsigned char kPiSubst[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243, 192, 199,
    115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,
    138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122, 169, 104,
    121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,
    53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,
    170, 198, 79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,
    100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,
    97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
    44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193,
    171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,
    80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20,
};

class Md2 {
public:
    void add(const void* data, size_t bytes, unsigned char mask = 0)
    {
        const auto* p = static_cast<const unsigned char*>(data);
        for (size_t i = 0; i < bytes; ++i) {
            block_[used_++] = p[i] ^ mask;
            if (used_ == 16) {
                compress();
                used_ = 0;
            }
        }
    }
    void finish(unsigned char digest[16])
    {
        const unsigned char pad = static_cast<unsigned char>(16 - used_);
        for (unsigned i = 0; i < pad; ++i)
            add(&pad, 1);
        unsigned char checksum[16];
        memcpy(checksum, checksum_, 16);
        add(checksum, 16);
        memcpy(digest, state_, 16);
    }

private:
    void compress()
    {
        unsigned char x[48];
        memcpy(x, state_, 16);
        for (int j = 0; j < 16; ++j) {
            x[16 + j] = block_[j];
            x[32 + j] = block_[j] ^ state_[j];
            last_ = checksum_[j] ^= kPiSubst[block_[j] ^ last_];
        }
        unsigned t = 0;
        for (unsigned round = 0; round < 18; ++round) {
            for (unsigned char& b : x)
                t = b ^= kPiSubst[t];
            t = (t + round) & 0xff;
        }
        memcpy(state_, x, 16);
    }

    unsigned char state_[16] = {};
    unsigned char checksum_[16] = {};
    unsigned char block_[16] = {};
    unsigned char last_ = 0;
    unsigned used_ = 0;
};

} // namespace guest::libcuda
