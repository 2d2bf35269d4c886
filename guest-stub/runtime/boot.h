// Access to the boot info the VMM left at KVMGPU_BOOT_INFO_GPA and to the
// parsed command line. Valid once the runtime has started guest_main.
#pragma once

#include <stdint.h>

#include "guest-stub/runtime/cmdline.h"
#include "kvmtool-gpu/abi/platform_abi.h"

namespace guest {

const kvmgpu_boot_info& boot_info();
const Cmdline& cmdline();
uint64_t ram_size();
// Writes boot_info.guest_result (the only field besides guest_* the guest owns).
void set_guest_result(uint64_t value);

// Called once by the runtime start-up: validates the boot info (magic,
// version, sizes) and parses the command line. false (with a message
// printed) if the boot info cannot be used.
bool boot_init(const kvmgpu_boot_info* info, uint64_t image_end_linked);

} // namespace guest
