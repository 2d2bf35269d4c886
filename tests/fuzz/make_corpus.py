#!/usr/bin/env python3
"""Writes the seed corpora in tests/fuzz/corpus/ (committed; re-run after a
change to an input format). Each seed is a small, meaningful guest session
in the format its harness reads (missing bytes read as zero):
  vgpu_device/   vgpu_device_fuzz_body.{h,cpp}: an op-code program
  guest_ranges/  guest_ranges_fuzz.cpp: a RAM layout, then queries
  vgpu_command/  vgpu_fuzz_body.{h,cpp}: a ring image and guest data
  linux_elf/     linux_elf_fuzz_body.{h,cpp}: a whole executable file
Usage: python3 tests/fuzz/make_corpus.py"""
import os
import re
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- vgpu_device ------------------------------------------------------------
# The harness picks opcode kOpcodes[i]: the rows of the opcode table
# (kvmtool-gpu/abi/vgpu_ops.h) in order, read from the header itself.
with open(os.path.join(HERE, "..", "..", "kvmtool-gpu", "abi", "vgpu_ops.h")) as f:
    OPS = re.findall(r"^\s*X\((\w+), \d+,", f.read(), re.M)
# The seeds' short names.
ALIAS = {"COUNT": "DEVICE_GET_COUNT", "ATTR": "DEVICE_GET_ATTRIBUTE", "NAME": "DEVICE_GET_NAME",
         "TOTAL": "DEVICE_TOTAL_MEM", "CTXSYNC": "CTX_SYNCHRONIZE", "ALLOC": "MEM_ALLOC", "FREE": "MEM_FREE",
         "INFO": "MEM_GET_INFO", "HTOD": "MEMCPY_HTOD", "DTOH": "MEMCPY_DTOH", "DTOD": "MEMCPY_DTOD",
         "HTOD_SG": "MEMCPY_HTOD_SG", "DTOH_SG": "MEMCPY_DTOH_SG", "D8": "MEMSET_D8", "D32": "MEMSET_D32",
         "RAMPTR": "GUEST_RAM_DEVICE_PTR", "MODLOAD": "MODULE_LOAD_DATA", "UNLOAD": "MODULE_UNLOAD",
         "GETFN": "MODULE_GET_FUNCTION", "LAUNCH": "LAUNCH_KERNEL_PACKED", "SCREATE": "STREAM_CREATE",
         "SSYNC": "STREAM_SYNCHRONIZE", "SDESTROY": "STREAM_DESTROY", "ECREATE": "EVENT_CREATE",
         "ERECORD": "EVENT_RECORD", "ESYNC": "EVENT_SYNCHRONIZE", "EELAPSED": "EVENT_ELAPSED_TIME",
         "EDESTROY": "EVENT_DESTROY"}
# The prologue's handles, in order (known[] in the harness).
D0, D1, STREAM, EVENT, MODULE, WIN_LO, WIN_HI, FN_VADD, FN_MATMUL, FN_EMPTY = range(10)
# The other VM's: buffer, stream, event, module, window, function, host pointer.
V_BUF, V_STREAM, V_EVENT, V_MODULE, V_WIN, V_FN, V_HOST = range(7)


def u8(v): return struct.pack("<B", v & 0xFF)
def i8(v): return struct.pack("<b", v)
def u16(v): return struct.pack("<H", v & 0xFFFF)
def u32(v): return struct.pack("<I", v & 0xFFFFFFFF)
def u64(v): return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


class V:  # value encodings (Session::value)
    raw = staticmethod(lambda v: u8(0) + u64(v))
    known = staticmethod(lambda i, off=0: u8(1) + u8(i) + i8(off))
    victim = staticmethod(lambda i, off=0: u8(2) + u8(i) + i8(off))
    ram = staticmethod(lambda off, high=False: u8(3) + u8(1 if high else 0) + u32(off))
    edge = staticmethod(lambda i: u8(4) + u8(i))
    small = staticmethod(lambda v: u8(5) + u16(v))
    end = staticmethod(lambda back, high=False: u8(6) + u8(1 if high else 0) + u8(back))
    host = staticmethod(lambda off: u8(7) + u16(off))


ZERO = V.small(0)


def cmd(op, args=(), slot=0, async_=False, payload=b""):
    args = list(args) + [ZERO] * (6 - len(args))
    out = u8(0) + u8(slot) + u8(OPS.index(ALIAS.get(op, op))) + u8(1 if async_ else 0) + b"".join(args)
    return out + (payload or u8(0)) + u16(0)


def name(i): return u8(2) + u8(i)           # payload: kernel name kNames[i]
def raw_payload(b): return u8(1) + u16(len(b)) + b


def params(*vals):                          # payload: a packed launch's buffer (8-byte values; the last 4)
    return u8(3) + u8(len(vals)) + b"".join(u8(1) + v for v in vals)


def publish(n=1): return u8(2) + u8(n - 1)
def publish_raw(p): return u8(2) + u8(0xFF) + u32(p)
def poke(off, data, high=False): return u8(3) + u8(1) + u8(1 if high else 0) + u32(off) + u8(len(data)) + data
def poke_ring(off, data): return u8(3) + u8(0) + u16(off) + u8(len(data)) + data


def sg_list(off, entries):                  # entries: (gpa encoding, length)
    out = u8(4) + u8(0) + u32(off) + u8(len(entries))
    for gpa, n in entries:
        out += gpa + u8(1) + u16(n)
    return out


def reg_write(off, width, value): return u8(5) + u16(off if off < 0x40 else 0x8000 | off) + u8(width - 1) + value
def reg_read(off, width): return u8(6) + u16(off) + u8(width - 1)
def reset(default=True): return u8(7) + u8(1 if default else 0)
def burst(n): return u8(8) + u8(n - 1)


DEVICE = {
    "copy_roundtrip": cmd("HTOD", [V.known(D0), V.ram(0x10000), V.small(4096), V.known(STREAM)])
    + cmd("DTOH", [V.ram(0x12000), V.known(D0), V.small(4096)], slot=1)
    + cmd("DTOD", [V.known(D1), V.known(D0), V.small(4096)], slot=2, async_=True)
    + cmd("CTXSYNC", slot=3) + publish(4),
    "alloc_free": cmd("ALLOC", [V.small(1000)]) + publish() + cmd("FREE", [V.known(10)]) + publish()
    + cmd("FREE", [V.known(10)]) + publish() + cmd("INFO") + publish(),
    "memset": cmd("D8", [V.known(D1), V.small(0xAB), V.small(16384)]) + cmd("D32", [V.known(D1, 1), V.small(7), V.small(4)], slot=1)
    + publish(2),
    "sg_each_strategy": sg_list(0x9000, [(V.ram(0x10000), 4096), (V.ram(0x11000), 100), (V.ram(0x400, True), 300)])
    + b"".join(cmd("HTOD_SG", [V.known(D1), V.ram(0x9000), V.small(3), ZERO, V.small(s)], slot=s) for s in range(6))
    + publish(6)
    + cmd("DTOH_SG", [V.known(D1), V.ram(0x9000), V.small(3), V.known(STREAM), V.small(2)]) + publish(),
    "sg_into_ring": sg_list(0x9000, [(V.ram(0x1000), 64), (V.ram(0x1080), 64)])
    + cmd("DTOH_SG", [V.known(D0), V.ram(0x9000), V.small(2), ZERO, V.small(0)]) + publish(),
    "vector_add": cmd("LAUNCH", [V.known(FN_VADD), ZERO, V.raw(4 | 1 << 32), V.raw(1 | 64 << 32), V.raw(1 | 1 << 32),
                                 V.raw(28 << 32)],
                      payload=params(V.known(D0), V.known(D0), V.known(D1), V.small(256))) + publish(),
    "vector_add_window": cmd("LAUNCH", [V.known(FN_VADD), V.known(STREAM), V.raw(1 | 1 << 32), V.raw(1 | 32 << 32),
                                        V.raw(1 | 1 << 32), V.raw(28 << 32)],
                             payload=params(V.known(WIN_LO), V.known(WIN_LO), V.known(WIN_HI), V.small(32)))
    + publish(),
    "matmul_fault": cmd("LAUNCH", [V.known(FN_MATMUL), ZERO, V.raw(1 | 1 << 32), V.raw(1 | 16 << 32),
                                   V.raw(16 | 1 << 32), V.raw(28 << 32)],
                        payload=params(V.known(D0), V.known(D0), V.known(D0), V.small(64))) + publish()
    + cmd("NOP") + publish(),
    "module_function": poke(0x9000, b"any image") + cmd("MODLOAD", [V.ram(0x9000), V.small(9)]) + publish()
    + cmd("GETFN", [V.known(10)], payload=name(1)) + publish() + cmd("GETFN", [V.known(10)], payload=name(4))
    + publish() + cmd("UNLOAD", [V.known(10)]) + publish() + cmd("LAUNCH", [V.known(11)]) + publish(),
    "streams_events": cmd("ERECORD", [V.known(EVENT), V.known(STREAM)]) + cmd("ECREATE", [ZERO], slot=1) + publish(2)
    + cmd("ERECORD", [V.known(10), ZERO]) + cmd("EELAPSED", [V.known(EVENT), V.known(10)], slot=1)
    + cmd("ESYNC", [V.known(EVENT)], slot=2) + cmd("EDESTROY", [V.known(EVENT)], slot=3)
    + cmd("SDESTROY", [V.known(STREAM)], slot=4) + cmd("SSYNC", [V.known(STREAM)], slot=5) + publish(6),
    "device_queries": cmd("INIT") + cmd("COUNT", slot=1) + cmd("ATTR", [V.small(10), ZERO], slot=2)
    + cmd("NAME", [ZERO], slot=3) + cmd("TOTAL", [ZERO], slot=4) + cmd("RAMPTR", [V.ram(0x100, True), V.small(64)], slot=5)
    + publish(6),
    "other_vm": cmd("HTOD", [V.victim(V_BUF), V.ram(0x10000), V.small(16)]) + cmd("SSYNC", [V.victim(V_STREAM)], slot=1)
    + cmd("DTOD", [V.known(D0), V.victim(V_WIN), V.small(16)], slot=2) + cmd("LAUNCH", [V.victim(V_FN)], slot=3)
    + cmd("UNLOAD", [V.victim(V_MODULE)], slot=4) + cmd("FREE", [V.victim(V_BUF)], slot=5) + publish(6)
    + cmd("LAUNCH", [V.known(FN_VADD), ZERO, V.raw(1 | 1 << 32), V.raw(1 | 4 << 32), V.raw(1 | 1 << 32), V.raw(28 << 32)],
          payload=params(V.known(D0), V.known(D0), V.victim(V_HOST), V.small(4))) + publish(),
    "outside_ram": cmd("HTOD", [V.known(D0), V.edge(4), V.small(16)]) + cmd("HTOD", [V.known(D0), V.end(8), V.small(16)], slot=1)
    + cmd("DTOH", [V.edge(10), V.known(D0), V.small(4)], slot=2) + cmd("MODLOAD", [V.edge(8), V.small(64)], slot=3)
    + cmd("RAMPTR", [V.end(8, True), V.small(16)], slot=4) + publish(5),
    "wrapping_lengths": cmd("HTOD", [V.known(D0), V.ram(0x10000), V.edge(2)]) + cmd("D32", [V.known(D0), ZERO, V.edge(3)], slot=1)
    + cmd("HTOD_SG", [V.known(D0), V.ram(0x9000), V.edge(14)], slot=2) + publish(3),
    "broken_ring": cmd("NOP") + publish() + publish_raw(0x80000000) + reset() + cmd("NOP") + publish(),
    "producer_behind": publish_raw(0) + reset() + burst(8),
    "consumer_scribble": poke_ring(64, u32(12345)) + burst(3),
    "ring_reenable": reset(False) + V.ram(0x4000) + u8(2) + burst(4) + reset() + burst(2),
    "registers": reg_write(0x10, 8, V.ram(0x3000)) + reg_write(0x18, 4, V.small(16)) + reg_write(0x1C, 4, V.small(3))
    + burst(5) + reg_read(0x0, 8) + reg_read(0x20, 4) + reg_read(0x2D, 3) + reg_write(0x1C, 4, V.small(0x80))
    + reg_write(0x1000, 4, V.small(1)),
    "garbage_commands": cmd("NOP", [V.raw(-1)] * 6, payload=raw_payload(bytes(range(200)))) + publish()
    + u8(0) + u8(0) + u8(250) + u8(255) + b"\xff\xff" + b"".join([V.raw(-1)] * 6) + u8(0) + u16(0xFFFF) + publish(),
}

# ---- guest_ranges -----------------------------------------------------------


def layout(*regions):  # (top?, page index or pages-from-top, pages)
    out = u8(len(regions) - 1)
    for top, where, pages in regions:
        out += u8(1 if top else 0) + u8(pages - 1) + (u8(where) if top else u16(where))
    return out


RANGES = {
    "two_regions_translate": layout((False, 0, 4), (False, 16, 2)) + (u8(0) + u8(1) + i8(-1) + u8(2) + u16(8)) * 3
    + u8(0) + u8(2) + i8(-4) + u8(2) + u16(8) + u8(0) + u8(6) + i8(0) + u8(1) + u16(1),
    "top_of_space": layout((True, 0, 1), (True, 3, 2)) + u8(0) + u8(1) + i8(0) + u8(2) + u16(4096)
    + u8(0) + u8(2) + i8(-1) + u8(1) + u16(1),
    "sg_merge": layout((False, 0, 8)) + u8(3) + u8(5) + (u8(1) + i8(0) + u8(2) + u16(100)) + (u8(1) + u8(2) + u16(100)) * 4,
    "allocations": layout((False, 0, 1)) + u8(5) + u32(10000) + u8(3) + u8(0)
    + (u8(0) + u8(2) + u32(0x1000) + u8(1) + u16(100)) + (u8(2) + u8(0) + i8(50) + u8(1) + u16(50))
    + (u8(1) + u8(0) + i8(0) + u8(1) + u16(0)),
    "handles": layout((False, 0, 1)) + u8(6) + u8(3) + u32(77) + (u8(0) + u64(0)) * 3 + u8(1) + u8(0)
    + u8(3) + u8(0) + u8(0x83) + u8(1) + u8(40) + u8(2) + u8(0) + u8(3) + u8(1),
}

# ---- vgpu_command (another engineer's harness: [steps][ring image][data]) ----
RING8 = 128 + 8 * (64 + 32 + 448)


def ring_image(cmds):
    img = bytearray(RING8)
    for slot, cmd_ in enumerate(cmds):
        op, args = cmd_[0], cmd_[1]
        payload = cmd_[2] if len(cmd_) > 2 else b""
        a = list(args) + [0] * (6 - len(args))
        img[128 + 64 * slot:128 + 64 * slot + 64] = struct.pack("<HHIQ6Q", op, 0, len(payload), slot + 1, *a)
        at = 128 + 8 * 96 + 448 * slot
        img[at:at + len(payload)] = payload
    return bytes(img)


MAGIC = 0xD0D0_0000_0000_0000
BLAS = MAGIC | 6 << 8  # the harness's cuBLAS handle


def blas_head(routine, flags=0): return struct.pack("<QII", BLAS, routine, flags)
def mat(ptr, ld, stride=0): return struct.pack("<Qqq", ptr, ld, stride)
def vec(ptr, inc): return struct.pack("<Qq", ptr, inc)
def scalar_f32(v): return struct.pack("<f", v) + bytes(12)


# vgpu_blas_abi.h's structs: an sgemm of 4 x 4 matrices in the harness's
# allocation, its strided batch of 2, and a level-1 sdot.
SGEMM = (blas_head(30) + struct.pack("<IIiiiiIIIIIi", 0, 0, 4, 4, 4, 1, 0, 0, 0, 0, 0, -1) + scalar_f32(1) +
         scalar_f32(0) + mat(MAGIC, 4) + mat(MAGIC | 1, 4) + mat(MAGIC | 2, 4))
SGEMM_STRIDED = (blas_head(30) + struct.pack("<IIiiiiIIIIIi", 0, 1, 4, 4, 4, 2, 1, 0, 0, 0, 0, -1) +
                 scalar_f32(1) + scalar_f32(0) + mat(MAGIC, 4, 16) + mat(MAGIC | 2, 4, 16) + mat(MAGIC | 4, 4, 16))
SDOT = blas_head(3) + struct.pack("<Ii", 0, 16) + vec(MAGIC, 1) + vec(MAGIC | 1, 1) + bytes(16) + struct.pack("<Q", 0)
# vgpu_abi.h's vgpu_fft_plan_many: a 1-D C2C of 8 points, batch 2, read
# with stride 2 and distance 16 (advanced layout), written densely.
FFT_MANY = struct.pack("<II3q3qqq3qqqqII", 1, 0x29, 8, 1, 1, 8, 1, 1, 2, 16, 8, 1, 1, 1, 8, 2, 1, 0)
QUASI = MAGIC | 12 << 8  # the harness's Sobol32 generator
COMMAND = {
    "quasi_session": u8(0x15) + ring_image([(307, [QUASI, 3]), (305, [QUASI, 5]), (306, [QUASI, 201]),
                                            (304, [QUASI, MAGIC, 6, 2, 0, 0x3FF0000000000000]),
                                            (304, [QUASI, MAGIC, 6, 1]), (308, [101, MAGIC, 2560000]),
                                            (307, [MAGIC | 7 << 8, 2])]),
    "fft_many_session": u8(0x15) + ring_image([(324, [], FFT_MANY), (325, [MAGIC | 8 << 8, MAGIC]),
                                               (323, [MAGIC | 8 << 8, MAGIC, MAGIC | 16, 0x29, 1])]),
    "rand_session": u8(0x15) + ring_image([(303, [MAGIC | 7 << 8, 42]), (304, [MAGIC | 7 << 8, MAGIC, 64, 1]),
                                           (304, [MAGIC | 7 << 8, MAGIC | 1, 64, 4, 0, 0x3FF0000000000000]),
                                           (302, [MAGIC | 7 << 8, MAGIC | 1 << 8]), (301, [MAGIC | 7 << 8])]),
    "fft_session": u8(0x15) + ring_image([(322, [MAGIC | 8 << 8, MAGIC | 1 << 8]),
                                          (323, [MAGIC | 8 << 8, MAGIC, MAGIC | 16, 0x29, (1 << 64) - 1]),
                                          (320, [2, 8, 8, 1, 0x2a, 1]), (321, [MAGIC | 8 << 8])]),
    "blas_session": u8(0x15) + ring_image([(210, [], SDOT), (220, [], SGEMM), (220, [], SGEMM_STRIDED),
                                           (203, [BLAS, 3]), (205, []), (201, [BLAS]), (200, [])]),
    "nops": u8(0x01) + ring_image([(0, [])] * 3),
    "alloc_copy": u8(0x15) + ring_image([(10, [4096]), (13, [MAGIC, 64 << 10, 256, 0]), (14, [(64 << 10) + 512, MAGIC, 256, 0]),
                                         (11, [MAGIC])]) + bytes(range(256)),
}

# ---- linux_elf --------------------------------------------------------------
# Executables as ld lays them out (as tests/unit/linux/linux_elf_builder.h):
# a code PT_LOAD from offset 0, a data one with .bss, PT_GNU_STACK, and a
# PT_INTERP for the dynamic ones.
def linux_elf(pie, interp=None):
    base = 0 if pie else 0x400000
    phdrs = [(1, 5, 0, base, 0x1800, 0x1800, 0x1000), (1, 6, 0x1800, base + 0x2800, 0x800, 0x3000, 0x1000),
             (0x6474E551, 6, 0, 0, 0, 0, 8)]
    if interp is not None:
        phdrs.append((3, 4, 0x200, base + 0x200, len(interp), len(interp), 1))
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    eh = ident + struct.pack("<HHIQQQIHHHHHH", 3 if pie else 2, 62, 1, base + 0x1000, 64, 0, 0, 64, 56,
                             len(phdrs), 64, 0, 0)
    body = bytearray(b"\x90" * 0x2000)
    body[:64] = eh
    for i, p in enumerate(phdrs):
        t, fl, off, va, fs, ms, al = p
        body[64 + 56 * i:64 + 56 * (i + 1)] = struct.pack("<IIQQQQQQ", t, fl, off, va, va, fs, ms, al)
    if interp is not None:
        body[0x200:0x200 + len(interp)] = interp
    return bytes(body)


ELF = {
    "static": linux_elf(False),
    "static_pie": linux_elf(True),
    "dynamic": linux_elf(True, b"/lib64/ld-linux-x86-64.so.2\0"),
    "interp_escape": linux_elf(True, b"../../../etc/passwd\0"),
}


def write(sub, seeds):
    d = os.path.join(HERE, "corpus", sub)
    os.makedirs(d, exist_ok=True)
    for name_, data in seeds.items():
        with open(os.path.join(d, name_), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("vgpu_device", DEVICE)
    write("guest_ranges", RANGES)
    write("vgpu_command", COMMAND)
    write("linux_elf", ELF)
    print("seeds:", len(DEVICE), "vgpu_device,", len(RANGES), "guest_ranges,", len(COMMAND), "vgpu_command,", len(ELF), "linux_elf")
