// CHECK for the Linux-ABI test guests (each a static program of its own):
// a failed condition prints "FAILED: <what>" and counts in `failures`,
// which the program's exit status reports.
#pragma once

#include <stdio.h>

static int failures = 0;
#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            printf("FAILED: " __VA_ARGS__);                                                                           \
            printf("\n");                                                                                             \
            ++failures;                                                                                               \
        }                                                                                                             \
    } while (0)
