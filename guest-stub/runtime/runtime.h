// Everything a guest program needs from the runtime, in one include.
// A program defines `int guest_main(const kvmgpu_boot_info*)`; its return
// value is the exit code (0 = every check passed; see exit_codes.h).
#pragma once

#include "guest-stub/runtime/boot.h"
#include "guest-stub/runtime/cmdline.h"
#include "guest-stub/runtime/console.h"
#include "guest-stub/runtime/exit.h"
#include "guest-stub/runtime/exit_codes.h"
#include "guest-stub/runtime/format.h"
#include "guest-stub/runtime/heap.h"
#include "guest-stub/runtime/mem.h"
#include "guest-stub/runtime/mmio.h"
#include "guest-stub/runtime/rng.h"
#include "guest-stub/runtime/sort.h"
#include "guest-stub/runtime/tsc.h"
#include "kvmtool-gpu/abi/platform_abi.h"

int guest_main(const kvmgpu_boot_info* info);
