#!/usr/bin/env python3
"""Writes the hand-made seed corpora of tests/fuzz/corpus/<target>/.

Each seed is one named request (a valid import, an edge case, a known
refusal), encoded the way the targets read their input: libFuzzer's
FuzzedDataProvider takes integers from the END of the data, most
significant byte first, as many bytes as the range needs.  The encoders
below mirror the targets' read order (fuzz_input.hpp: pick, size), so a seed
here is the request its name says.  Run it after changing a target's read
order:  tests/fuzz/seeds.py   (rewrites the corpus folders)."""
import hashlib
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


class Input:
    def __init__(self):
        self.tail = []  # bytes in the order they are consumed

    def int_range(self, lo, hi, v, bits=64):
        assert lo <= v <= hi, (lo, hi, v)
        rng, r, n = hi - lo, v - lo, 0
        while n * 8 < bits and (rng >> (n * 8)) > 0:
            n += 1
        self.tail += [(r >> (8 * (n - 1 - i))) & 0xFF for i in range(n)]
        return self

    def boolean(self, b):
        return self.int_range(0, 255, 1 if b else 0, 8)

    def u32(self, v):
        return self.int_range(0, 2**32 - 1, v, 32)

    def u64(self, v):
        return self.int_range(0, 2**64 - 1, v, 64)

    def pick(self, table, v):
        """fuzz::pick: a table entry, else a raw 64-bit value."""
        v &= 2**64 - 1
        if v in table:
            self.int_range(0, 255, 4 * table.index(v), 8)
        else:
            self.int_range(0, 255, 3, 8).u64(v)
        return self

    SIZES = [0, 1, 2, 3, 4, 63, 64, 65, 127, 128, 511, 512, 4095, 4096, 32764, 32767, 32768, 65535, 65536,
             2**32 - 1, 2**63 - 1, 2**64 - 1, 2**63]

    def size(self, mx, v):
        """fuzz::size: 0..mx directly, else from the boundary table or raw."""
        v &= 2**64 - 1
        if v <= mx:
            return self.int_range(0, 7, 1, 32).int_range(0, mx, v)
        return self.int_range(0, 7, 0, 32).pick(self.SIZES, v)

    def data(self):
        return bytes(reversed(self.tail))


def write(target, seeds):
    folder = os.path.join(HERE, 'corpus', target)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, inp in seeds:
        blob = inp.data()
        digest = hashlib.sha1(blob).hexdigest()[:8]
        with open(os.path.join(folder, f'{name}-{digest}'), 'wb') as f:
            f.write(blob)


# ---- fuzz-properties ---------------------------------------------------------
DMABUF, DEVLIST = 0x2067, 0x2051
NAMES = [DMABUF, DEVLIST, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x2065, 0x2066, 0x2068, 0x2069,
         0x10C00, 0x10C01, 0x10C02, 0x10C03, 0x10C04, 0x10C05, 0x4216, 0x10C0F, 0x1111]
VALUES = [0, 1, 2, 3, 7, 1023, 2**31 - 1, 2**31, 2**32 - 1, 2**64 - 1, 1, 0, 4096,
          0x0100000000000001, 0x0100000000000002, 0x00ffffffffffffff]
DEVS = [0x10, 0x20, 0x30, 0x1000]


def khr(kind, entries):
    inp = Input().int_range(0, 3, kind, 32).int_range(0, 8, len(entries), 32)
    for name, value in entries:
        inp.pick(NAMES, name)
        if name == DEVLIST:
            inp.int_range(0, 4, len(value), 32)
            for d in value:
                inp.pick(DEVS, d)
        else:
            inp.pick(VALUES, value)
    return inp


ARM_KEYS = [0x40B2, 0x40B5, 0x41E3, 0x40B3, DMABUF, 0x40B6]
ARM_VALUES = [0x40B3, 0x40B4, 0x41E2, 1, 0, 2, 0, 2**64 - 1]


def arm(entries):
    inp = Input().int_range(0, 3, 2, 32).int_range(0, 6, len(entries), 32)
    for k, v in entries:
        inp.pick(ARM_KEYS, k).pick(ARM_VALUES, v)
    return inp


write('fuzz-properties', [
    ('buffer-dmabuf-fd', khr(0, [(DMABUF, 7)])),
    ('buffer-fd-with-devices-and-icd-property', khr(0, [(0x4216, 3), (DMABUF, 7), (DEVLIST, [0x10, 0x20])])),
    ('buffer-empty-device-list', khr(0, [(DMABUF, 7), (DEVLIST, [])])),
    ('buffer-device-list-without-handle', khr(0, [(DEVLIST, [0x10])])),
    ('buffer-negative-fd', khr(0, [(DMABUF, 2**64 - 1)])),
    ('buffer-fd-past-int-max', khr(0, [(DMABUF, 2**31)])),
    ('buffer-two-handles', khr(0, [(DMABUF, 3), (0x2060, 4)])),
    ('buffer-opaque-fd-only', khr(0, [(0x2060, 3)])),
    ('buffer-layer-property-to-icd', khr(0, [(DMABUF, 3), (0x10C00, 4096)])),
    ('image-nv12-chroma-plane', khr(1, [(DMABUF, 3), (0x10C00, 4096), (0x10C01, 0)])),
    ('image-y-tiled-consented', khr(1, [(DMABUF, 3), (0x10C01, 0x0100000000000002), (0x10C02, 1)])),
    ('image-invalid-modifier-assume-linear', khr(1, [(DMABUF, 3), (0x10C01, 0x00ffffffffffffff), (0x10C03, 1)])),
    ('image-flag-not-boolean', khr(1, [(DMABUF, 3), (0x10C02, 2)])),
    ('image-route-query-name', khr(1, [(DMABUF, 3), (0x10C04, 1)])),
    ('image-repeated-offset', khr(1, [(DMABUF, 3), (0x10C00, 0), (0x10C00, 64)])),
    ('image-unknown-layer-range', khr(1, [(DMABUF, 3), (0x10C05, 1), (0x1111, 2)])),
    ('arm-dma-buf', arm([(0x40B2, 0x40B4)])),
    ('arm-dma-buf-host-consistent', arm([(0x40B2, 0x40B4), (0x41E3, 1)])),
    ('arm-protected-not-boolean', arm([(0x40B2, 0x40B4), (0x40B5, 2)])),
    ('arm-type-twice', arm([(0x40B2, 0x40B4), (0x40B2, 0x40B3)])),
    ('arm-unknown-key', arm([(DMABUF, 3)])),
    ('arm-bad-type', arm([(0x40B2, 2)])),
    ('null-lists', Input().int_range(0, 3, 3, 32)),
])

# ---- fuzz-image-geometry -----------------------------------------------------
OFFSETS = [0, 1, 64, 4096, 8192, 1 << 20, 2**32 - 1, 2**64 - 1]
MOD_LINEAR, MOD_INVALID = 0, 0x00ffffffffffffff
MOD_X, MOD_Y, MOD_YF, MOD_YCCS = 0x0100000000000001, 0x0100000000000002, 0x0100000000000003, 0x0100000000000004
MODS = [MOD_LINEAR, MOD_INVALID, MOD_X, MOD_Y, MOD_YF, MOD_YCCS]
ORDERS = [0x10B0, 0x10B1, 0x10B2, 0x10B3, 0x10B4, 0x10B5, 0x10B6, 0x10B7, 0x10B8, 0x10B9, 0x10BA, 0x10BB, 0x10BC,
          0x10BD, 0x10BF, 0x10C0, 0x10C1, 0x10C2, 0x10C3, 0x10B7, 0x1234]
TYPES = [0x10D0, 0x10D1, 0x10D2, 0x10D3, 0x10D4, 0x10D5, 0x10D6, 0x10D7, 0x10D8, 0x10D9, 0x10DA, 0x10DB, 0x10DC,
         0x10DD, 0x10DE, 0x10DF, 0x10E0, 0x4321]
OBJ = {'1d': 0, '1dbuf': 1, '1darray': 2, '2d': 3, '2darray': 4, '3d': 5, 'buffer': 6}
R, RG, RGBA, BGRA = 0, 2, 5, 6          # indexes in ORDERS
UNORM8, UNORM16, FLOAT, UINT32 = 2, 3, 14, 12  # indexes in TYPES


def image(offset=0, modifier=None, tiled=False, linear=False, order=RGBA, ctype=UNORM8, obj='2d', w=64, h=32,
          depth=0, array=0, row_pitch=0, slice_pitch=0, dmabuf=1 << 20):
    inp = Input().pick(OFFSETS, offset).boolean(modifier is not None).pick(MODS, modifier or 0)
    inp.boolean(tiled).boolean(linear)
    inp.int_range(0, len(ORDERS) - 1, order).int_range(0, len(TYPES) - 1, ctype).int_range(0, 6, OBJ[obj])
    inp.size(4096, w).size(512, h).size(16, depth).size(16, array)
    inp.boolean(row_pitch == 0)
    if row_pitch:
        inp.size(70000, row_pitch)
    inp.boolean(slice_pitch == 0)
    if slice_pitch:
        inp.size(1 << 22, slice_pitch)
    return inp.size(1 << 26, dmabuf)


write('fuzz-image-geometry', [
    ('rgba8-2d-linear', image()),
    ('nv12-luma-1080p', image(order=R, w=1920, h=1080, row_pitch=2048, dmabuf=2048 * 1080 * 3 // 2)),
    ('nv12-chroma-plane-offset', image(offset=1 << 20, order=RG, w=960, h=540, row_pitch=2048, dmabuf=(1 << 20) + 2048 * 540)),
    ('p010-r16', image(order=R, ctype=UNORM16, w=1920, h=1080, row_pitch=4096, dmabuf=4096 * 1080)),
    ('pitch-not-element-multiple', image(row_pitch=258)),
    ('pitch-smaller-than-row', image(row_pitch=128)),
    ('past-dmabuf-end', image(dmabuf=64 * 4 * 32 - 1)),
    ('offset-overflows', image(offset=2**64 - 1)),
    ('x-tiled-consented', image(modifier=MOD_X, tiled=True, w=256, h=64, dmabuf=1 << 20)),
    ('y-tiled-consented-pitch', image(modifier=MOD_Y, tiled=True, w=100, h=33, row_pitch=512, dmabuf=1 << 20)),
    ('y-tiled-no-consent', image(modifier=MOD_Y, w=100, h=33)),
    ('y-tiled-offset-misaligned', image(offset=64, modifier=MOD_Y, tiled=True, w=100, h=33)),
    ('x-tiled-tile-rows-past-end', image(modifier=MOD_X, tiled=True, w=128, h=9, dmabuf=512 * 9)),
    ('ccs-refused', image(modifier=MOD_YCCS, tiled=True)),
    ('invalid-modifier-assumed-linear', image(modifier=MOD_INVALID, linear=True)),
    ('2d-array-slice-pitch', image(obj='2darray', array=4, slice_pitch=64 * 4 * 32 + 256)),
    ('1d-array', image(obj='1darray', w=100, array=8)),
    ('3d-float', image(obj='3d', ctype=FLOAT, depth=4, w=16, h=16)),
    ('1d-slice-pitch-given', image(obj='1d', w=100, slice_pitch=4096)),
    ('width-overflows', image(order=RGBA, ctype=UINT32, w=2**63)),
    ('not-an-image-type', image(obj='buffer')),
])

# ---- fuzz-blit ---------------------------------------------------------------
def copy_buffer(same, src, dst, sbase, ssize, dbase, dsize, so, do, n):
    inp = Input().int_range(0, 2, 0, 32).boolean(same).size(256 << 10, src).u32(1)
    if not same:
        inp.size(256 << 10, dst).u32(2)
    inp.size(70000, sbase).size(256 << 10, ssize).size(70000, dbase).size(256 << 10, dsize)
    return inp.size(70000, so).size(70000, do).size(256 << 10, n)


def copy_rect(same, src, dst, sub, so, do, region, srp=0, ssp=0, drp=0, dsp=0, sbase=0, dbase=0):
    inp = Input().int_range(0, 2, 1, 32).boolean(same).size(512 << 10, src).u32(3)
    if not same:
        inp.size(512 << 10, dst).u32(4)
    inp.boolean(sub)
    if sub:
        inp.size(4096, sbase).size(4096, dbase)
    for i in range(3):
        mx = 40000 if i == 0 else 64
        inp.size(mx, so[i]).size(mx, do[i]).size(40000 if i == 0 else 64 if i == 1 else 8, region[i])
    return inp.size(70000, srp).size(1 << 20, ssp).size(70000, drp).size(1 << 20, dsp)


LIN, X, Y = 0, 1, 2
ELEMS = [1, 2, 4, 8, 16, 3]


def side(inp, tiling, offset, pitch, x, y):
    inp.int_range(0, 2, tiling, 32)
    inp.boolean(offset % 4096 == 0 and offset <= 8 * 4096)
    if offset % 4096 == 0 and offset <= 8 * 4096:
        inp.int_range(0, 8, offset // 4096)
    else:
        inp.size(9000, offset)
    inp.boolean(pitch % 128 == 0 and 128 <= pitch <= 128 * 64)
    if pitch % 128 == 0 and 128 <= pitch <= 128 * 64:
        inp.int_range(1, 64, pitch // 128, 32)
    else:
        inp.size(140000, pitch)
    return inp.size(600, x).size(100, y)


def copy_2d(es, s, d, w, h, slack=0):
    inp = Input().int_range(0, 2, 2, 32).pick(ELEMS, es)
    side(inp, *s)
    side(inp, *d)
    return inp.size(300, w).size(80, h).int_range(0, 64, slack).u32(5).u32(6)


write('fuzz-blit', [
    ('buffer-aligned-4k', copy_buffer(False, 8192, 8192, 0, 8192, 0, 8192, 0, 0, 4096)),
    ('buffer-same-misalignment', copy_buffer(False, 8192, 8192, 0, 8192, 0, 8192, 3, 7, 1001)),
    ('buffer-odd-tail', copy_buffer(False, 8192, 8192, 0, 8192, 0, 8192, 0, 0, 4099)),
    ('buffer-wide-rows', copy_buffer(False, 200000, 200000, 0, 200000, 0, 200000, 64, 128, 150001)),
    ('buffer-one-import-sub-buffers', copy_buffer(True, 65536, 0, 0, 32768, 32768, 32768, 100, 200, 30000)),
    ('buffer-overlap-refused', copy_buffer(True, 8192, 0, 0, 8192, 0, 8192, 0, 100, 1000)),
    ('rect-2d-pitched', copy_rect(False, 65536, 65536, False, (5, 3, 0), (7, 2, 0), (100, 20, 1), 256, 0, 300)),
    ('rect-3d-slices', copy_rect(False, 131072, 131072, False, (0, 0, 1), (4, 1, 0), (64, 8, 3), 128, 4096, 132, 2048)),
    ('rect-unaligned-pitch', copy_rect(False, 65536, 65536, True, (1, 1, 0), (2, 2, 0), (33, 17, 1), 65, 0, 67, 0, 3, 5)),
    ('rect-contiguous', copy_rect(False, 65536, 65536, False, (0, 0, 0), (0, 0, 0), (256, 16, 2))),
    ('rect-one-buffer', copy_rect(True, 65536, 0, False, (0, 0, 0), (0, 40, 0), (100, 20, 1), 128, 0, 128)),
    ('rect-pitch-past-limit', copy_rect(False, 200000, 200000, False, (0, 0, 0), (0, 0, 0), (16, 4, 1), 40000, 0, 40000)),
    ('2d-linear-to-linear', copy_2d(4, (LIN, 0, 1024, 3, 2), (LIN, 64, 2048, 1, 1), 100, 20)),
    ('2d-x-tiled-to-linear', copy_2d(4, (X, 0, 1024, 0, 0), (LIN, 0, 1024, 0, 0), 256, 16)),
    ('2d-linear-to-y-tiled', copy_2d(2, (LIN, 0, 512, 0, 0), (Y, 4096, 512, 0, 0), 256, 40)),
    ('2d-y-to-x-16-byte-elements', copy_2d(16, (Y, 0, 1024, 2, 3), (X, 8192, 2048, 1, 9), 40, 20)),
    ('2d-8-byte-offset-tiles', copy_2d(8, (X, 4096, 1536, 5, 7), (LIN, 8, 2048, 0, 0), 60, 30, 7)),
    ('2d-bad-element-size', copy_2d(3, (LIN, 0, 512, 0, 0), (LIN, 0, 512, 0, 0), 10, 10)),
    ('2d-tiled-pitch-not-tiles', copy_2d(4, (Y, 0, 200, 0, 0), (LIN, 0, 1024, 0, 0), 10, 10)),
])

# ---- fuzz-egl-attribs ----------------------------------------------------------
GL_CONTEXT, EGL_DISPLAY, GLX, WGL, CGL = 0x2008, 0x2009, 0x200A, 0x200B, 0x200C
TILED, PLATFORM, USER_SYNC = 0x10C0F, 0x1084, 0x1085
CTX_KEYS = [GL_CONTEXT, EGL_DISPLAY, GLX, WGL, CGL, TILED, PLATFORM, USER_SYNC, 0x10C00]
CTX_VALUES = [0, 1, 1, 0, 0x1000, 2]


def context(entries):
    inp = Input().int_range(0, 3, 0, 32).int_range(0, 8, len(entries), 32)
    for k, v in entries:
        inp.pick(CTX_KEYS, k).pick(CTX_VALUES, v)
    return inp


IMG_KEYS = [TILED, 0x10C0E, 0x3092]
IMG_VALUES = [1, 0, 2, 0]


def egl_image(entries, null=False):
    inp = Input().int_range(0, 3, 1, 32).int_range(0, 4, len(entries), 32)
    for k, v in entries:
        inp.pick(IMG_KEYS, k).pick(IMG_VALUES, v)
    return inp.boolean(null)


TARGETS = [0x0DE1, 0x0DE0, 0x8C18, 0x8C2A, 0x8C1A, 0x806F, 0x84F5, 0x8515, 0x851A, 0x8513, 0x8D41, 0]


def fourcc_code(s):
    return sum(ord(c) << (8 * i) for i, c in enumerate(s))


FOURCCS = [fourcc_code(s) for s in ['NV12', 'P010', 'AR24', 'XR24', 'AB24', 'XB24', 'R8  ', 'GR88', 'R16 ', 'GR32',
                                    'YUYV']]

write('fuzz-egl-attribs', [
    ('context-egl-sharing', context([(PLATFORM, 0x1000), (GL_CONTEXT, 0x1000), (EGL_DISPLAY, 1)])),
    ('context-glx', context([(GLX, 1), (GL_CONTEXT, 1)])),
    ('context-tiled-consent', context([(EGL_DISPLAY, 1), (TILED, 1), (USER_SYNC, 1)])),
    ('context-empty', context([])),
    # Regressions: the ICD never sees these keys, so the layer answers CL_INVALID_PROPERTY.
    ('context-gl-context-twice', context([(EGL_DISPLAY, 1), (GL_CONTEXT, 0x1000), (GL_CONTEXT, 1)])),
    ('context-tiled-not-boolean', context([(EGL_DISPLAY, 1), (TILED, 2)])),
    ('egl-image-tiled', egl_image([(TILED, 1)])),
    ('egl-image-tiled-not-boolean', egl_image([(TILED, 2)])),
    ('egl-image-preserved-refused', egl_image([(0x3092, 1)])),
    ('egl-image-null', egl_image([], True)),
    ('texture-2d', Input().int_range(0, 3, 2, 32).pick(TARGETS, 0x0DE1)),
    ('texture-3d', Input().int_range(0, 3, 2, 32).pick(TARGETS, 0x806F)),
    ('texture-cube-map', Input().int_range(0, 3, 2, 32).pick(TARGETS, 0x8513)),
    ('fourcc-nv12', Input().int_range(0, 3, 3, 32).pick(FOURCCS, fourcc_code('NV12'))),
    ('fourcc-p010', Input().int_range(0, 3, 3, 32).pick(FOURCCS, fourcc_code('P010'))),
    ('fourcc-unknown', Input().int_range(0, 3, 3, 32).pick(FOURCCS, fourcc_code('YUYV'))),
])
