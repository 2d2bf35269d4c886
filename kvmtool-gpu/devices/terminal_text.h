// Guest console text made safe for the operator's terminal: a guest must not
// be able to move the cursor, clear the screen, retitle the window or ring
// the bell. Printable ASCII and tab pass; every other byte (ESC, BEL, CR,
// DEL, any byte >= 0x80, so UTF-8 too) becomes \xNN, and a backslash \\, so
// the text stays unambiguous. Only for terminal sinks: a sink that parses
// lines or writes a file gets the guest's bytes as they are.
#pragma once

#include <string>
#include <string_view>

namespace kvmgpu {

std::string escape_for_terminal(std::string_view text);

} // namespace kvmgpu
