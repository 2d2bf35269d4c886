// The Linux-ABI ELF loader under fuzzing: the input is a whole executable
// file, as hostile as a guest's program or the interpreter its PT_INTERP
// names (linux_elf.h, linux_interp.h). Each input is classified, inspected,
// placed as an interpreter and loaded into a small guest RAM. Checks: every
// refusal is an ImageError with one line of text; nothing else is thrown;
// no read reaches outside the file (the image source traps on one); an
// accepted image lies inside the limit it was given and names an
// interpreter path of a bounded length without a NUL.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvmgpu::fuzz {

void run_linux_elf_input(const uint8_t* data, size_t size);

} // namespace kvmgpu::fuzz
