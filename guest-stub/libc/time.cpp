// <time.h>'s clock(): processor time as the guest's TSC measures it since
// an arbitrary origin (only differences mean anything, as with clock()
// anywhere; the guest runs only this program), in microseconds
// (CLOCKS_PER_SEC is 1000000, as glibc's headers say).
#include <time.h>

#include "guest-stub/runtime/tsc.h"

extern "C" clock_t clock(void) noexcept
{
    return static_cast<clock_t>(guest::tsc_to_us(guest::rdtsc()));
}
