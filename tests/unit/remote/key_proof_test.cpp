#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "kvmtool-gpu/remote/key_proof.h"

namespace kvmgpu::remote {
namespace {

std::string hex(const Digest& d) {
    std::string s;
    char b[3];
    for (uint8_t v : d) {
        std::snprintf(b, sizeof b, "%02x", v);
        s += b;
    }
    return s;
}

std::span<const uint8_t> bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

TEST(KeyProof, Sha256MatchesFips180Examples) {
    EXPECT_EQ(hex(sha256(bytes_of("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex(sha256(bytes_of(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    // 56 bytes: the length no longer fits the first padded block.
    EXPECT_EQ(hex(sha256(bytes_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(hex(sha256(bytes_of(std::string(1000000, 'a')))),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(KeyProof, HmacMatchesRfc4231) {
    // Test case 2, and test case 6 (a key longer than the block).
    EXPECT_EQ(hex(hmac_sha256(bytes_of("Jefe"), bytes_of("what do ya want for nothing?"))),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    EXPECT_EQ(hex(hmac_sha256(bytes_of(std::string(131, '\xaa')),
                              bytes_of("Test Using Larger Than Block-Size Key - Hash Key First"))),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(KeyProof, ProofsDifferByRoleKeyAndNonce) {
    const SharedKey k{"0123456789abcdef-key"}, other{"0123456789abcdef-kez"};
    const Nonce a = fresh_nonce(), b = fresh_nonce();
    EXPECT_FALSE(a == b);
    EXPECT_TRUE(same_digest(key_proof(k, "server", a, b), key_proof(k, "server", a, b)));
    EXPECT_FALSE(same_digest(key_proof(k, "server", a, b), key_proof(k, "client", a, b)));
    EXPECT_FALSE(same_digest(key_proof(k, "server", a, b), key_proof(k, "server", b, a)));
    EXPECT_FALSE(same_digest(key_proof(k, "server", a, b), key_proof(other, "server", a, b)));
}

struct KeyFile {
    std::string path = testing::TempDir() + "kvmgpu-key-" + std::to_string(getpid());
    KeyFile(const std::string& text, mode_t mode) {
        std::ofstream(path) << text;
        chmod(path.c_str(), mode);
    }
    ~KeyFile() { unlink(path.c_str()); }
};

TEST(KeyProof, KeyFilesMustBePrivateAndLongEnough) {
    SharedKey key;
    std::string why;
    {
        KeyFile f("a-long-enough-secret\n", 0600);
        ASSERT_TRUE(load_shared_key(f.path, &key, &why)) << why;
        EXPECT_EQ(key.bytes, "a-long-enough-secret"); // the newline is not part of it
    }
    {
        KeyFile f("a-long-enough-secret\n", 0644);
        EXPECT_FALSE(load_shared_key(f.path, &key, &why));
        EXPECT_NE(why.find("readable by others"), std::string::npos) << why;
    }
    {
        KeyFile f("short\n", 0600);
        EXPECT_FALSE(load_shared_key(f.path, &key, &why));
        EXPECT_NE(why.find("shorter than 16"), std::string::npos) << why;
    }
    EXPECT_FALSE(load_shared_key("/nonexistent/key", &key, &why));
    EXPECT_NE(why.find("/nonexistent/key"), std::string::npos) << why;
}

} // namespace
} // namespace kvmgpu::remote
