// The plugin dyn_check dlopens: C++ of its own (a std::string and an
// exception thrown and caught inside it), one C entry point.
#include <stdexcept>
#include <string>

namespace {
std::string text;
}

extern "C" const char* plugin_describe(int n) {
    try {
        if (n > 2) throw std::out_of_range("caught in the plugin");
    } catch (const std::exception& e) {
        text = std::string("loaded, n=") + std::to_string(n) + ", " + e.what();
    }
    return text.c_str();
}
