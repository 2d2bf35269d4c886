// Writes its by-value parameters to out back to back, so a guest can check
// that every one arrived whole (kvmtool-gpu/abi/param_echo_shapes.h). The host backend's
// CPU reference kernel of the same name does the same.
#include "kvmtool-gpu/abi/param_echo_shapes.h"

extern "C" __global__ void param_echo(uint8_t* out, char c, EchoVec3 v, EchoQuad q, EchoBig big, short s)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    unsigned at = 0;
    auto put = [&](const void* p, unsigned n) {
        for (unsigned i = 0; i < n; ++i)
            out[at + i] = static_cast<const uint8_t*>(p)[i];
        at += n;
    };
    put(&c, 1);
    put(&v, sizeof v);
    put(&q, sizeof q);
    put(&big, sizeof big);
    put(&s, sizeof s);
}
