// mmap, munmap, mprotect and the VMM's pointers over the file window
// (file_window.h), through the system-call server with a fake slot setter:
// a read-only root's file is mapped in the window (not copied into RAM), the
// guest's calls read it there, /proc/self/maps names it, and a file the
// guest can write is still copied into RAM.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <map>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

struct FileWindowCalls : Server {
    std::map<uint32_t, std::pair<uint64_t, bool>> slots; // id -> (gpa, read-only)
    void make_with_window(bool read_only_root) {
        options.window_slots = [this](uint32_t id, uint64_t gpa, uint64_t size, void*, bool ro) {
            if (size == 0) slots.erase(id);
            else slots[id] = {gpa, ro};
            return 0;
        };
        options.window_limits = WindowLimits{1, 8, 64};
        make(true, read_only_root);
    }
    int64_t open_in() {
        put(kBuf, "/in.txt");
        return ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY);
    }
    std::string maps() {
        put(kBuf, "/proc/self/maps");
        const int64_t fd = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY);
        std::string text;
        for (int64_t n; (n = ret(SYS_read, fd, kBuf + 4096, 4096)) > 0;)
            text.append(reinterpret_cast<char*>(at(kBuf + 4096)), static_cast<size_t>(n));
        ret(SYS_close, fd);
        return text;
    }
};

TEST_F(FileWindowCalls, ReadOnlyRootFileIsMappedInTheWindowAndReadable) {
    make_with_window(true);
    const int64_t fd = open_in();
    ASSERT_GE(fd, 3);
    const int64_t at = ret(SYS_mmap, 0, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
    ASSERT_GE(at, static_cast<int64_t>(KVMGPU_LINUX_FILE_WINDOW_GPA));
    ASSERT_LT(at, static_cast<int64_t>(KVMGPU_LINUX_FILE_WINDOW_GPA + KVMGPU_LINUX_FILE_WINDOW_SIZE));
    EXPECT_EQ(slots.size(), 1u);
    EXPECT_TRUE(slots.begin()->second.second) << "read-only slot";
    // The guest's own calls take pointers into it: write(1, map + 2, 3).
    EXPECT_EQ(ret(SYS_write, 1, static_cast<uint64_t>(at) + 2, 3), 3);
    EXPECT_EQ(console, "234");
    EXPECT_NE(maps().find("r--p 00000000 00:00 0"), std::string::npos) << maps();
    EXPECT_NE(maps().find("/in.txt"), std::string::npos) << maps();
    // MAP_FIXED anonymous inside the window (a library's bss), then mprotect PROT_NONE: its slot goes.
    EXPECT_EQ(ret(SYS_mmap, static_cast<uint64_t>(at) + 4096, 4096, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, static_cast<uint64_t>(-1), 0),
              at + 4096);
    EXPECT_EQ(slots.size(), 2u);
    EXPECT_EQ(ret(SYS_mprotect, static_cast<uint64_t>(at) + 4096, 4096, PROT_NONE), 0);
    EXPECT_EQ(slots.size(), 1u);
    EXPECT_EQ(ret(SYS_write, 1, static_cast<uint64_t>(at) + 4096, 1), -EFAULT) << "PROT_NONE: no pointer";
    EXPECT_EQ(ret(SYS_mprotect, static_cast<uint64_t>(at) + 8192, 4096, PROT_READ), -ENOMEM) << "unmapped";
    EXPECT_EQ(ret(SYS_munmap, static_cast<uint64_t>(at), 8192), 0);
    EXPECT_TRUE(slots.empty());
    EXPECT_EQ(ret(SYS_write, 1, static_cast<uint64_t>(at), 1), -EFAULT);
    // MAP_FIXED_NOREPLACE over a mapping in the window: EEXIST.
    const int64_t again = ret(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    ASSERT_GT(again, 0);
    EXPECT_EQ(ret(SYS_mmap, static_cast<uint64_t>(again), 4096, PROT_READ, MAP_PRIVATE | 0x100000, fd, 0), -EEXIST);
    // Across the window's edge: ENOMEM.
    EXPECT_EQ(ret(SYS_mmap, KVMGPU_LINUX_FILE_WINDOW_GPA - 4096, 8192, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0),
              -ENOMEM);
}

TEST_F(FileWindowCalls, WritableShareFileIsCopiedIntoRam) {
    make_with_window(false);
    const int64_t fd = open_in();
    ASSERT_GE(fd, 3);
    const int64_t at = ret(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    ASSERT_GT(at, 0);
    EXPECT_LT(static_cast<uint64_t>(at), kRam) << "a file the guest may shorten is never mapped";
    EXPECT_TRUE(slots.empty());
    EXPECT_EQ(static_cast<char>(*this->at(static_cast<uint64_t>(at))), '0');
}

TEST_F(FileWindowCalls, NoWindowWithoutSlotSetter) {
    make(true, true);
    EXPECT_EQ(server->file_window(), nullptr);
    const int64_t fd = open_in();
    const int64_t at = ret(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    ASSERT_GT(at, 0);
    EXPECT_LT(static_cast<uint64_t>(at), kRam);
}

} // namespace
} // namespace kvmgpu::linux_abi
