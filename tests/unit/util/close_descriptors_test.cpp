// close_descriptors_but (util/close_descriptors.h), in a forked child: what
// it keeps stays open, every other descriptor from 3 up is closed, and
// stdin, stdout and stderr stay.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "kvmtool-gpu/util/close_descriptors.h"

namespace kvmgpu {
namespace {

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(CloseDescriptors, KeepsOnlyWhatItIsGivenAndTheStandardThree) {
    const pid_t pid = fork();
    if (pid == 0) {
        int fds[6];
        for (int& fd : fds)
            if ((fd = open("/dev/null", O_RDONLY)) < 3) _exit(10);
        if (dup2(0, 200) != 200) _exit(10); // one far above the others
        // Out of order, one twice, one standard descriptor among them.
        const int keep[] = {fds[4], 1, fds[1], fds[4]};
        close_descriptors_but(keep);
        if (!is_open(0) || !is_open(1) || !is_open(2)) _exit(11);
        if (!is_open(fds[1]) || !is_open(fds[4])) _exit(12);
        for (const int i : {0, 2, 3, 5})
            if (is_open(fds[i])) _exit(13);
        if (is_open(200)) _exit(14);
        _exit(0);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st)) << st;
    EXPECT_EQ(WEXITSTATUS(st), 0) << "10: no descriptors, 11: a standard one closed, 12: a kept one closed, "
                                     "13: one not kept stayed open, 14: the one far above stayed open";
}

} // namespace
} // namespace kvmgpu
