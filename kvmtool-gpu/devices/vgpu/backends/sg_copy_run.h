/* One entry of the gather/scatter kernels' run table: copy len bytes from
 * src to dst, both device addresses (guest RAM through its zero-copy
 * mapping on one side, a device buffer on the other). Shared by the host
 * code that fills the table and sg_kernels.cu that reads it. */
#ifndef KVMGPU_VGPU_SG_COPY_RUN_H
#define KVMGPU_VGPU_SG_COPY_RUN_H

#include <stdint.h>

struct kvmgpu_copy_run {
    uint64_t src;
    uint64_t dst;
    uint64_t len;
};

#define KVMGPU_SG_THREADS 256 /* threads per block of both kernels */

#endif
