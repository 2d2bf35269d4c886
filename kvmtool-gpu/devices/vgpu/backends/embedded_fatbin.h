// The fatbin of sg_kernels.cu, embedded in the VMM binary by
// embed_fatbin.S.in (see this folder's CMakeLists.txt). Present only when
// KVMGPU_HAVE_SG_FATBIN is defined (nvcc was found at configure time).
#pragma once

#ifdef KVMGPU_HAVE_SG_FATBIN
extern "C" const unsigned char kvmgpu_sg_fatbin[];
extern "C" const unsigned char kvmgpu_sg_fatbin_end[];
#endif
