// The pieces of the multi-file guest that live outside its .cu.
#pragma once

#ifdef __cplusplus
#include <string>
// "n=<n> sum=<sum>", or throws std::invalid_argument for n < 0 (label.cpp).
std::string make_label(int n, float sum);
extern "C" {
#endif
// Sum of x[0..n) in index order (checksum.c).
float checksum(const float* x, int n);
#ifdef __cplusplus
}
#endif
