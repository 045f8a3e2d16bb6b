"""dma-bufs for the tests, and the CPU's view of them, through ioctls only.

Sources (``CLDMABUF_TEST_DMABUF``, as the C++ suites read it): ``heap``
(/dev/dma_heap/system), ``udmabuf`` (/dev/udmabuf over a sealed memfd),
``vgem`` (a dumb buffer of vgem, PRIME-exported) and ``sim`` (a GEM object
of the virtual Gen9, libvgen9.so preloaded into this process, PRIME-exported).
Unset: the first of them this machine has.  The uAPI structures are restated
from the kernel's headers (linux/dma-buf.h, linux/dma-heap.h, linux/udmabuf.h,
drm/drm.h, drm/i915_drm.h, drm/drm_mode.h); tests/support/dmabuf_source.cpp
makes the same buffers for the C++ suites.
"""

import contextlib
import ctypes
import fcntl
import mmap
import os

_IOC_WRITE, _IOC_READ = 1, 2


def _ioc(direction, kind, nr, struct):
    return (direction << 30) | (ctypes.sizeof(struct) << 16) | (ord(kind) << 8) | nr


def _iowr(kind, nr, struct):
    return _ioc(_IOC_READ | _IOC_WRITE, kind, nr, struct)


def _iow(kind, nr, struct):
    return _ioc(_IOC_WRITE, kind, nr, struct)


u32, u64, i32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32


class _DmaBufSync(ctypes.Structure):
    _fields_ = [("flags", u64)]


class _DmaBufExportSyncFile(ctypes.Structure):
    _fields_ = [("flags", u32), ("fd", i32)]


class _DmaHeapAllocation(ctypes.Structure):
    _fields_ = [("len", u64), ("fd", u32), ("fd_flags", u32), ("heap_flags", u64)]


class _UdmabufCreate(ctypes.Structure):
    _fields_ = [("memfd", u32), ("flags", u32), ("offset", u64), ("size", u64)]


class _DrmVersion(ctypes.Structure):
    _fields_ = [("version_major", ctypes.c_int), ("version_minor", ctypes.c_int),
                ("version_patchlevel", ctypes.c_int), ("name_len", ctypes.c_size_t),
                ("name", ctypes.c_void_p), ("date_len", ctypes.c_size_t),
                ("date", ctypes.c_void_p), ("desc_len", ctypes.c_size_t),
                ("desc", ctypes.c_void_p)]


class _DrmPrimeHandle(ctypes.Structure):
    _fields_ = [("handle", u32), ("flags", u32), ("fd", i32)]


class _DrmGemClose(ctypes.Structure):
    _fields_ = [("handle", u32), ("pad", u32)]


class _I915GemCreate(ctypes.Structure):
    _fields_ = [("size", u64), ("handle", u32), ("pad", u32)]


class _DrmModeCreateDumb(ctypes.Structure):
    _fields_ = [("height", u32), ("width", u32), ("bpp", u32), ("flags", u32),
                ("handle", u32), ("pitch", u32), ("size", u64)]


DMA_BUF_SYNC_READ, DMA_BUF_SYNC_WRITE, DMA_BUF_SYNC_END = 1, 2, 4
DMA_BUF_IOCTL_SYNC = _iow("b", 0, _DmaBufSync)
DMA_BUF_IOCTL_EXPORT_SYNC_FILE = _iowr("b", 2, _DmaBufExportSyncFile)
DMA_HEAP_IOCTL_ALLOC = _iowr("H", 0, _DmaHeapAllocation)
UDMABUF_CREATE = _iow("u", 0x42, _UdmabufCreate)
UDMABUF_FLAGS_CLOEXEC = 1
DRM_IOCTL_VERSION = _iowr("d", 0x00, _DrmVersion)
DRM_IOCTL_GEM_CLOSE = _iow("d", 0x09, _DrmGemClose)
DRM_IOCTL_PRIME_HANDLE_TO_FD = _iowr("d", 0x2D, _DrmPrimeHandle)
DRM_IOCTL_I915_GEM_CREATE = _iowr("d", 0x40 + 0x1B, _I915GemCreate)
DRM_IOCTL_MODE_CREATE_DUMB = _iowr("d", 0xB2, _DrmModeCreateDumb)
DRM_CLOEXEC, DRM_RDWR = os.O_CLOEXEC, os.O_RDWR

# Checked against the C headers' values (a typo in a structure would show here).
assert DMA_BUF_IOCTL_SYNC == 0x40086200
assert DMA_HEAP_IOCTL_ALLOC == 0xC0184800
assert UDMABUF_CREATE == 0x40187542
assert DRM_IOCTL_PRIME_HANDLE_TO_FD == 0xC00C642D
assert DRM_IOCTL_I915_GEM_CREATE == 0xC010645B

PAGE = mmap.PAGESIZE
HEAP_PATH = "/dev/dma_heap/system"
UDMABUF_PATH = "/dev/udmabuf"


def page_round(size):
    return (size + PAGE - 1) // PAGE * PAGE


def ioctl(fd, request, struct):
    """The ioctl on a ctypes structure, in place; returns the ioctl's result."""
    buf = bytearray(struct)
    result = fcntl.ioctl(fd, request, buf, True)
    ctypes.memmove(ctypes.addressof(struct), bytes(buf), len(buf))
    return result


def drm_driver(fd):
    name = ctypes.create_string_buffer(64)
    v = _DrmVersion(name_len=63, name=ctypes.addressof(name))
    try:
        ioctl(fd, DRM_IOCTL_VERSION, v)
    except OSError:
        return ""
    return name.value.decode(errors="replace")


def _can_open(path):
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CLOEXEC))
        return True
    except OSError:
        return False


def _find_node(prefix, driver):
    try:
        names = sorted(os.listdir("/dev/dri"))
    except OSError:
        names = []
    if prefix == "renderD" and "renderD128" not in names:
        names.append("renderD128")  # the virtual Gen9's node is not in the listing of a real /dev
    for name in names:
        if not name.startswith(prefix):
            continue
        try:
            fd = os.open("/dev/dri/" + name, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        if drm_driver(fd) == driver:
            return fd
        os.close(fd)
    return None


def _prime_export(node, handle):
    prime = _DrmPrimeHandle(handle=handle, flags=DRM_CLOEXEC | DRM_RDWR, fd=-1)
    try:
        ioctl(node, DRM_IOCTL_PRIME_HANDLE_TO_FD, prime)
    finally:
        # The dma-buf keeps the object alive.
        ioctl(node, DRM_IOCTL_GEM_CLOSE, _DrmGemClose(handle=handle))
    return prime.fd


class Source:
    """Makes dma-buf fds of one kind; the fds are the caller's."""

    KINDS = ("heap", "udmabuf", "vgem", "sim")

    def __init__(self, kind=None):
        kind = kind or os.environ.get("CLDMABUF_TEST_DMABUF") or None
        self.node = None
        self.kind = None
        for k in ([kind] if kind else self.KINDS):
            if k not in self.KINDS:
                raise ValueError("CLDMABUF_TEST_DMABUF=%s: not one of %s" % (k, ", ".join(self.KINDS)))
            if self._open(k):
                self.kind = k
                break

    def _open(self, kind):
        if kind == "heap":
            return _can_open(HEAP_PATH)
        if kind == "udmabuf":
            return _can_open(UDMABUF_PATH)
        if kind == "vgem":
            # CREATE_DUMB is for primary nodes only.
            self.node = _find_node("card", "vgem")
        else:
            self.node = _find_node("renderD", "i915")
        return self.node is not None

    def make(self, size):
        """A new dma-buf fd of at least ``size`` bytes (a page multiple)."""
        size = page_round(size)
        if self.kind == "heap":
            heap = os.open(HEAP_PATH, os.O_RDWR | os.O_CLOEXEC)
            try:
                a = _DmaHeapAllocation(len=size, fd_flags=os.O_RDWR | os.O_CLOEXEC)
                ioctl(heap, DMA_HEAP_IOCTL_ALLOC, a)
                return a.fd
            finally:
                os.close(heap)
        if self.kind == "udmabuf":
            memfd = os.memfd_create("cldmabuf-py-test", os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC)
            try:
                os.ftruncate(memfd, size)
                fcntl.fcntl(memfd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
                dev = os.open(UDMABUF_PATH, os.O_RDWR | os.O_CLOEXEC)
                try:
                    return ioctl(dev, UDMABUF_CREATE,
                                 _UdmabufCreate(memfd=memfd, flags=UDMABUF_FLAGS_CLOEXEC, size=size))
                finally:
                    os.close(dev)
            finally:
                os.close(memfd)  # the dma-buf keeps the pages
        if self.kind == "vgem":
            c = _DrmModeCreateDumb(width=PAGE // 4, bpp=32, height=size // PAGE)
            ioctl(self.node, DRM_IOCTL_MODE_CREATE_DUMB, c)
            return _prime_export(self.node, c.handle)
        if self.kind == "sim":
            c = _I915GemCreate(size=size)
            ioctl(self.node, DRM_IOCTL_I915_GEM_CREATE, c)
            return _prime_export(self.node, c.handle)
        raise RuntimeError("no dma-buf source on this machine")


def sync(fd, flags):
    ioctl(fd, DMA_BUF_IOCTL_SYNC, _DmaBufSync(flags=flags))


@contextlib.contextmanager
def cpu_access(fd, size, write=False):
    """The dma-buf's own mapping, bracketed by DMA_BUF_IOCTL_SYNC START/END."""
    direction = DMA_BUF_SYNC_READ | (DMA_BUF_SYNC_WRITE if write else 0)
    prot = mmap.PROT_READ | (mmap.PROT_WRITE if write else 0)
    m = mmap.mmap(fd, size, mmap.MAP_SHARED, prot)
    try:
        sync(fd, direction)
        try:
            yield m
        finally:
            sync(fd, direction | DMA_BUF_SYNC_END)
    finally:
        m.close()


def read(fd, size, offset=0):
    """``size`` bytes at ``offset`` of the dma-buf, as the CPU sees them."""
    with cpu_access(fd, page_round(offset + size)) as m:
        return bytes(m[offset:offset + size])


def write(fd, data, offset=0):
    with cpu_access(fd, page_round(offset + len(data)), write=True) as m:
        m[offset:offset + len(data)] = bytes(data)


def export_sync_file(fd, write=True):
    """The dma-buf's fences as a sync_file fd (Linux >= 6.0; the virtual Gen9 models it)."""
    e = _DmaBufExportSyncFile(flags=DMA_BUF_SYNC_WRITE if write else DMA_BUF_SYNC_READ, fd=-1)
    ioctl(fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, e)
    return e.fd


def open_fds():
    """The process's open fd numbers (the listing's own fd excluded)."""
    fds = set(int(n) for n in os.listdir("/proc/self/fd"))
    return {fd for fd in fds if _is_open(fd)}


def _is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def exporter_name(fd):
    """The dma-buf's exporter from /proc/self/fdinfo (``exp_name``), or None for another file."""
    try:
        with open("/proc/self/fdinfo/%d" % fd) as info:
            for line in info:
                if line.startswith("exp_name:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None
