/* Plain C, compiled as C: the multi-file guest's checksum. */
#include "multifile.h"

float checksum(const float* x, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; ++i)
        s += x[i];
    return s;
}
