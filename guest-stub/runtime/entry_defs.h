/* Constants shared by entry.S and the C++ runtime. entry.S cannot include
 * the ABI headers (they hold C declarations), so the values it needs are
 * repeated here and start.cpp static_asserts them against the ABI. */
#ifndef GUEST_STUB_RUNTIME_ENTRY_DEFS_H
#define GUEST_STUB_RUNTIME_ENTRY_DEFS_H

#define GUEST_ENTRY_MARKER_GPA 0x4000001000 /* KVMGPU_MARKER_GPA */
#define GUEST_ENTRY_MARKER_STAGE 1          /* KVMGPU_MARKER_STAGE_ENTRY */
#define GUEST_ENTRY_EXIT_PORT 0x500         /* KVMGPU_EXIT_PORT */
#define GUEST_STACK_BYTES (256 * 1024)      /* boot stack, in .bss */

#endif
