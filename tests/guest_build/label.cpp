// C++ with the library's out-of-line parts (std::string growth, to_string,
// an exception thrown and caught): needs libstdc++ and unwinding.
#include <stdexcept>
#include <string>

#include "multifile.h"

std::string make_label(int n, float sum)
{
    if (n < 0)
        throw std::invalid_argument("negative count " + std::to_string(n));
    std::string s = "n=" + std::to_string(n);
    s += " sum=" + std::to_string(static_cast<long long>(sum));
    return s;
}
