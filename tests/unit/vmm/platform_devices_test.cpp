#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/devices/boot_marker.h"
#include "kvmtool-gpu/devices/cpu_control.h"
#include "kvmtool-gpu/devices/debug_console.h"
#include "kvmtool-gpu/devices/terminal_text.h"
#include "kvmtool-gpu/devices/exit_device.h"

namespace kvmgpu {
namespace {

std::span<const uint8_t> bytes_of(const uint64_t& v) { return {reinterpret_cast<const uint8_t*>(&v), 8}; }

struct ConsoleFixture : ::testing::Test {
    memmap::GuestMemory mem;
    std::vector<std::string> lines;
    std::unique_ptr<DebugConsole> console;
    void SetUp() override {
        mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
        console = std::make_unique<DebugConsole>(mem, [this](std::string_view l) { lines.emplace_back(l); });
    }
    void put_buf(uint64_t gpa, uint32_t len, const char* text) {
        mem.write_obj(memmap::GuestPhysAddr{gpa}, len);
        mem.write(memmap::GuestPhysAddr{gpa + 8}, text, std::strlen(text));
    }
};

// A second guest thread's vCPU asked to load CR3; the first thread's vCPU,
// at its next unrelated MMIO exit, took the request and carried it out on
// itself. Each vCPU thread takes only what its own exit wrote.
TEST(CpuControl, ARequestIsTakenOnlyByTheVcpuThreadThatMadeIt) {
    CpuControl device;
    const uint64_t root = 0x7000;
    std::thread second([&] { device.write(KVMGPU_CPU_CONTROL_REG_LOAD_CR3, bytes_of(root)); });
    second.join();
    EXPECT_FALSE(device.take()) << "the first thread made no request";
    std::optional<CpuRequest> taken_there;
    const uint64_t n = 1000;
    std::thread third([&] {
        device.write(KVMGPU_CPU_CONTROL_REG_CALIBRATE, bytes_of(n));
        taken_there = device.take();
    });
    third.join();
    ASSERT_TRUE(taken_there);
    EXPECT_EQ(taken_there->kind, CpuRequest::Kind::CalibrateBegin);
    EXPECT_EQ(taken_there->value, n);
    device.write(KVMGPU_CPU_CONTROL_REG_LOAD_CR3, bytes_of(root));
    const auto mine = device.take();
    ASSERT_TRUE(mine);
    EXPECT_EQ(mine->kind, CpuRequest::Kind::LoadCr3);
    EXPECT_EQ(mine->value, root);
    EXPECT_FALSE(device.take()) << "once";
}

// A guest could rewrite the operator's screen through escape sequences
// (ESC [2J clears it, ESC ]0; retitles the window, BEL rings, CR overwrites).
TEST(TerminalText, ControlBytesAreEscaped) {
    EXPECT_EQ(escape_for_terminal("plain text\twith tab"), "plain text\twith tab");
    EXPECT_EQ(escape_for_terminal("\x1b[2J\x1b]0;pwned\x07"), "\\x1b[2J\\x1b]0;pwned\\x07");
    EXPECT_EQ(escape_for_terminal("ok\rfake"), "ok\\x0dfake");
    EXPECT_EQ(escape_for_terminal(std::string_view("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(escape_for_terminal("\x7f\xc3\xa9"), "\\x7f\\xc3\\xa9"); // DEL and UTF-8 bytes
    EXPECT_EQ(escape_for_terminal("back\\slash"), "back\\\\slash");       // unambiguous
    for (int c = 0; c < 256; ++c) { // nothing the terminal would act on survives
        const std::string out = escape_for_terminal(std::string(1, static_cast<char>(c)));
        for (char o : out) EXPECT_TRUE((o >= 0x20 && o < 0x7f) || o == '\t') << c;
    }
}

TEST_F(ConsoleFixture, LinesFromBuffersAndCharacters) {
    put_buf(0x1000, 12, "hello\nworld\n");
    const uint64_t gpa = 0x1000;
    console->write(KVMGPU_CONSOLE_REG_WRITE, bytes_of(gpa));
    const uint8_t c[] = {'x'};
    console->write(KVMGPU_CONSOLE_REG_PUTC, c);
    console->flush();
    EXPECT_EQ(lines, (std::vector<std::string>{"hello", "world", "x"}));
}

TEST_F(ConsoleFixture, HostileBuffersAreRejected) {
    put_buf(0x1000, KVMGPU_CONSOLE_MAX_LINE + 1, "too long");
    uint64_t gpa = 0x1000;
    console->write(KVMGPU_CONSOLE_REG_WRITE, bytes_of(gpa));
    put_buf((1 << 20) - 16, 100, "runs off the end");
    gpa = (1 << 20) - 16;
    console->write(KVMGPU_CONSOLE_REG_WRITE, bytes_of(gpa));
    gpa = ~0ull - 3; // header itself wraps
    console->write(KVMGPU_CONSOLE_REG_WRITE, bytes_of(gpa));
    console->flush();
    EXPECT_TRUE(lines.empty());
    EXPECT_EQ(console->rejected_writes(), 3u);
}

// A flood of empty lines costs the host a prefix and a newline each: the
// console's limit counts that, and past it one notice ends the output.
TEST_F(ConsoleFixture, OutputStopsAtTheLimitWithOneNotice) {
    DebugConsole small(mem, [this](std::string_view l) { lines.emplace_back(l); }, 10 * DebugConsole::kLineCost);
    small.write_text(std::string(100000, '\n'));
    small.write_text("late\n");
    small.flush();
    ASSERT_EQ(lines.size(), 11u);
    for (size_t i = 0; i < 10; ++i) EXPECT_EQ(lines[i], "");
    EXPECT_NE(lines[10].find("limit"), std::string::npos) << lines[10];
}

TEST(ExitDevice, OnlyAligned4ByteWritesCount) {
    ExitDevice d;
    const uint8_t one[] = {7};
    d.write(0, one);
    EXPECT_FALSE(d.requested());
    const uint32_t code = 42;
    d.write(0, {reinterpret_cast<const uint8_t*>(&code), 4});
    EXPECT_TRUE(d.requested());
    EXPECT_EQ(d.code(), 42u);
}

TEST(BootMarker, RecordsFirstTimeOnly) {
    BootMarker m(std::chrono::steady_clock::now());
    const uint64_t stage = KVMGPU_MARKER_STAGE_ENTRY;
    m.write(0, bytes_of(stage));
    const uint64_t first = m.stage_ns(KVMGPU_MARKER_STAGE_ENTRY);
    EXPECT_GT(first, 0u);
    m.write(0, bytes_of(stage));
    EXPECT_EQ(m.stage_ns(KVMGPU_MARKER_STAGE_ENTRY), first);
    const uint64_t bogus = 1000;
    m.write(0, bytes_of(bogus)); // out of range: ignored
    EXPECT_EQ(m.stage_ns(KVMGPU_MARKER_STAGE_MAIN), 0u);
}

} // namespace
} // namespace kvmgpu
