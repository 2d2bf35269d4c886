/* The payloads of the vGPU's array, 3-D copy, texture and surface opcodes
 * (VGPU_OP_ARRAY_CREATE .. VGPU_OP_SURF_OBJECT_DESTROY, vgpu_abi.h), and the
 * span rule both sides use to check a pitched side of a copy.
 *
 * Numbers inside are CUDA's own: CUarray_format, CUresourcetype,
 * CUaddress_mode, CUfilter_mode, CUDA_ARRAY3D_* and CU_TRSF_* flags.
 * Freestanding-safe; included by vgpu_abi.h. */
#ifndef KVMGPU_ABI_VGPU_ARRAY_ABI_H
#define KVMGPU_ABI_VGPU_ARRAY_ABI_H

#include <stdint.h>

/* An array's shape: CUDA_ARRAY3D_DESCRIPTOR's fields. height 0: a 1-D
 * array; depth 0: 2-D; with CUDA_ARRAY3D_LAYERED depth counts layers
 * (height 0 and depth > 0 only then). Offered: the integer, half and float
 * formats, 1, 2 or 4 channels, flags LAYERED, SURFACE_LDST, CUBEMAP,
 * TEXTURE_GATHER. */
struct vgpu_array_desc {
    uint64_t width, height, depth; /* elements */
    uint32_t format;               /* CUarray_format */
    uint32_t channels;
    uint32_t flags;                /* CUDA_ARRAY3D_* */
    uint32_t reserved;             /* 0 */
};

/* One side of a 3-D copy (CUDA_MEMCPY3D's src* or dst* fields). */
#define VGPU_COPY_HOST 1u   /* base: guest-physical address (guest RAM) */
#define VGPU_COPY_DEVICE 2u /* base: device address of this VM */
#define VGPU_COPY_ARRAY 3u  /* base: array handle of the current context */
struct vgpu_copy_side {
    uint32_t kind;      /* VGPU_COPY_* */
    uint32_t reserved;  /* 0 */
    uint64_t base;
    uint64_t x_bytes, y, z; /* where the copy starts */
    uint64_t pitch;     /* HOST, DEVICE: bytes from a row to the next */
    uint64_t height;    /* HOST, DEVICE: rows from a slice to the next (read when depth > 1) */
};
struct vgpu_copy3d {
    struct vgpu_copy_side src, dst;
    uint64_t width_bytes, height, depth; /* the box copied, each >= 1 */
};

/* A texture's or surface's resource: CUDA_RESOURCE_DESC's fields (no
 * mipmapped arrays). */
struct vgpu_tex_resource {
    uint32_t type;     /* CUresourcetype: ARRAY (0), LINEAR (2) or PITCH2D (3) */
    uint32_t format;   /* LINEAR, PITCH2D: CUarray_format */
    uint32_t channels; /* LINEAR, PITCH2D */
    uint32_t flags;    /* 0 */
    uint64_t handle;   /* ARRAY: array handle; LINEAR, PITCH2D: device address */
    uint64_t bytes;    /* LINEAR */
    uint64_t width, height, pitch; /* PITCH2D: elements, rows, bytes per row */
};
/* How a texture samples: CUDA_TEXTURE_DESC's fields. */
struct vgpu_tex_desc {
    uint32_t address_mode[3]; /* CUaddress_mode */
    uint32_t filter_mode;     /* CUfilter_mode */
    uint32_t flags;           /* CU_TRSF_* */
    uint32_t max_anisotropy;
    uint32_t mipmap_filter_mode;
    float mipmap_level_bias, min_mipmap_level_clamp, max_mipmap_level_clamp;
    float border_color[4];
};
struct vgpu_tex_object {
    struct vgpu_tex_resource resource;
    struct vgpu_tex_desc texture;
};

/* The bytes a pitched side (HOST or DEVICE) of a copy of width x height x
 * depth spans: from *first (an offset from base) for *bytes. 0 when the
 * side is impossible (a pitch narrower than the width where there are
 * several rows, a slice of fewer rows than the copy where there are several
 * slices) or an offset would not fit in 64 bits. */
static inline int vgpu_copy_span(const struct vgpu_copy_side* s, uint64_t width, uint64_t height, uint64_t depth,
                                 uint64_t* first, uint64_t* bytes)
{
    uint64_t row0, rows_before, last_row, last_slice, end;
    if (width == 0 || height == 0 || depth == 0) return 0;
    if ((height > 1 || depth > 1) && s->pitch < width) return 0;
    if (depth > 1 && s->height < height) return 0;
    /* first = x + pitch * (y + height * z) */
    if (__builtin_mul_overflow(s->height, s->z, &rows_before) || __builtin_add_overflow(rows_before, s->y, &rows_before) ||
        __builtin_mul_overflow(rows_before, s->pitch, &row0) || __builtin_add_overflow(row0, s->x_bytes, first))
        return 0;
    /* bytes = pitch * ((height - 1) + rows_per_slice * (depth - 1)) + width */
    if (__builtin_mul_overflow(s->height, depth - 1, &last_slice) ||
        __builtin_add_overflow(last_slice, height - 1, &last_row) || __builtin_mul_overflow(last_row, s->pitch, &end) ||
        __builtin_add_overflow(end, width, bytes) || __builtin_add_overflow(*first, *bytes, &end))
        return 0;
    return 1;
}

#ifdef __cplusplus
static_assert(sizeof(struct vgpu_array_desc) == 40, "array desc");
static_assert(sizeof(struct vgpu_copy3d) == 136, "copy3d fits a ring slot");
static_assert(sizeof(struct vgpu_tex_object) == 112, "texture object");
#endif

#endif
