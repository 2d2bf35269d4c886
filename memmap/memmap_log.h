// Where memmap's few setup messages go (which backing path was taken, why a
// fallback happened). memmap sits below the VMM, so it cannot use the VMM's
// logger: by default one line on stderr, like the VMM's; a sink can take
// them instead (tests capture them with one).
#pragma once

#include <string_view>

namespace memmap {

// Receives one line, without a trailing newline. Called only at setup time
// (Backing::create), never on a guest-driven path.
using LogSink = void (*)(std::string_view line);

// nullptr restores the default (one line on stderr, prefixed "memmap: ").
// Not thread-safe with concurrent Backing::create calls: set it at startup.
void set_log_sink(LogSink sink);

// Formats printf-style and hands the line to the sink.
void log_line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace memmap
