"""dma-buf imports as pyopencl objects, and the layer's allocator."""

import collections
import ctypes
import fcntl
import os

import pyopencl as cl

from . import _cl
from ._errors import NotSupportedError, check, layer_log
from ._support import DMA_BUF_EXTENSION, layer_loaded, require_extension, require_layer

mf = cl.mem_flags

#: One plane of a DRM format: the OpenCL format it imports as, its size as
#: divisors of the frame's, and its pixel size in bytes.
Plane = collections.namedtuple("Plane", "format width_divisor height_divisor bytes_per_pixel")


def _plane(order, dtype, wdiv, hdiv, bpp):
    return Plane(cl.ImageFormat(order, dtype), wdiv, hdiv, bpp)


_co, _ct = cl.channel_order, cl.channel_type
# The table of cl_dma_buf_fourcc_layout_cldmabuf() (include/CL/cl_ext_cldmabuf.h).
# DRM packed formats are little-endian words: AR24 is B, G, R, A in memory.
# P010 keeps its 10 bits in the high bits of each 16-bit word, so
# UNORM_INT16 reads it as value / 65535.
_FOURCC_LAYOUTS = {
    "NV12": (_plane(_co.R, _ct.UNORM_INT8, 1, 1, 1), _plane(_co.RG, _ct.UNORM_INT8, 2, 2, 2)),
    "P010": (_plane(_co.R, _ct.UNORM_INT16, 1, 1, 2), _plane(_co.RG, _ct.UNORM_INT16, 2, 2, 4)),
    "AR24": (_plane(_co.BGRA, _ct.UNORM_INT8, 1, 1, 4),),
    "XR24": (_plane(_co.BGRA, _ct.UNORM_INT8, 1, 1, 4),),
    "AB24": (_plane(_co.RGBA, _ct.UNORM_INT8, 1, 1, 4),),
    "XB24": (_plane(_co.RGBA, _ct.UNORM_INT8, 1, 1, 4),),
    "R8  ": (_plane(_co.R, _ct.UNORM_INT8, 1, 1, 1),),
    "GR88": (_plane(_co.RG, _ct.UNORM_INT8, 1, 1, 2),),
    "R16 ": (_plane(_co.R, _ct.UNORM_INT16, 1, 1, 2),),
    "GR32": (_plane(_co.RG, _ct.UNORM_INT16, 1, 1, 4),),
}


def _fourcc_name(fourcc):
    if isinstance(fourcc, int):
        fourcc = bytes((fourcc >> s) & 0xFF for s in (0, 8, 16, 24)).decode("latin-1")
    return fourcc.ljust(4)


def fourcc_layout(fourcc):
    """The planes of a DRM fourcc (``"NV12"`` or the 32-bit code) as a tuple of :class:`Plane`.

    Raises ValueError for a fourcc the layer's header does not describe.
    """
    name = _fourcc_name(fourcc)
    if name not in _FOURCC_LAYOUTS:
        raise ValueError("no OpenCL layout known for DRM fourcc %r (known: %s)"
                         % (name, ", ".join(n.strip() for n in _FOURCC_LAYOUTS)))
    return _FOURCC_LAYOUTS[name]


def _dup(fd):
    # Every import is given a duplicate of the caller's fd: a successful
    # import owns the fd it is given (cl_khr_external_memory), so the
    # caller's own fd stays the caller's, whatever the outcome.  A closed or
    # invalid fd raises OSError (EBADF) here, before any OpenCL call.
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 0)


def _device_list(devices):
    if not devices:
        return []
    return [_cl.MEM_DEVICE_HANDLE_LIST_KHR] + [d.int_ptr for d in devices] + [
        _cl.MEM_DEVICE_HANDLE_LIST_END_KHR]


def _dmabuf_size(fd):
    # A dma-buf answers lseek(0, SEEK_END) with its size, and only that
    # and (0, SEEK_SET).
    size = os.lseek(fd, 0, os.SEEK_END)
    os.lseek(fd, 0, os.SEEK_SET)
    return size


def _create_buffer(context, props, flags, size, routine_detail=""):
    """clCreateBufferWithProperties; returns the cl_mem handle or raises Error."""
    err = ctypes.c_int32(0)
    with layer_log() as log:
        mem = _cl.loader().clCreateBufferWithProperties(
            context.int_ptr, _cl.properties(props), flags, size, None, ctypes.byref(err))
    if not mem:
        check("clCreateBufferWithProperties", err.value or _cl.INVALID_VALUE, log, routine_detail)
    return mem


def import_buffer(context, fd, size, flags=mf.READ_WRITE, devices=None):
    """Imports the dma-buf ``fd`` as a :class:`pyopencl.Buffer` of ``size`` bytes.

    ``size`` may be ``None`` for the whole dma-buf.  The buffer holds a
    duplicate of ``fd``: the caller's fd stays the caller's to close, at once
    or later.  ``devices`` restricts the import to those devices of the
    context (``CL_MEM_DEVICE_HANDLE_LIST_KHR``).

    Access from devices must be bracketed by :func:`enqueue_acquire` and
    :func:`enqueue_release` (or :class:`acquired`).

    Raises :class:`Error` naming the OpenCL status when the import is
    refused (``CL_INVALID_PROPERTY``: not a dma-buf; ``CL_INVALID_BUFFER_SIZE``:
    larger than the dma-buf; ``CL_INVALID_VALUE``: host-pointer flags), with
    the layer's log line; :class:`NotSupportedError` when no device of the
    context imports dma-bufs; OSError when ``fd`` is not open.
    """
    require_extension(context, DMA_BUF_EXTENSION, devices)
    mine = _dup(fd)
    try:
        if size is None:
            size = _dmabuf_size(mine)
        props = [_cl.EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, mine] + _device_list(devices)
        mem = _create_buffer(context, props, flags, size)
    except BaseException:
        os.close(mine)
        raise
    return cl.Buffer.from_int_ptr(mem, retain=False)


def _image_format(fmt):
    return _cl.ImageFormat(fmt.channel_order, fmt.channel_data_type)


def _import_plane(context, fd, fmt, width, height, pitch, offset, flags, devices, extra):
    props = [_cl.EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, fd]
    if offset:
        props += [_cl.MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, offset]
    props += extra + _device_list(devices)
    desc = _cl.ImageDesc(image_type=_cl.MEM_OBJECT_IMAGE2D, image_width=width,
                         image_height=height, image_depth=1, image_array_size=1,
                         image_row_pitch=pitch or 0)
    cfmt = _image_format(fmt)
    err = ctypes.c_int32(0)
    with layer_log() as log:
        mem = _cl.loader().clCreateImageWithProperties(
            context.int_ptr, _cl.properties(props), flags, ctypes.byref(cfmt), ctypes.byref(desc),
            None, ctypes.byref(err))
    if not mem:
        check("clCreateImageWithProperties", err.value or _cl.INVALID_VALUE, log,
              "%dx%d image, format %s, pitch %s, plane offset %d"
              % (width, height, fmt, pitch or "tight", offset))
    return cl.Image.from_int_ptr(mem, retain=False)


def import_image(context, fd, format, shape, pitch=None, modifier=None, planes=None,
                 flags=mf.READ_WRITE, devices=None, allow_tiled=False):
    """Imports a linear (or, with the layer's blitter, tiled) 2D frame in the dma-buf ``fd``.

    ``format`` is a :class:`pyopencl.ImageFormat` or a DRM fourcc (``"NV12"``,
    ``"P010"``, ``"AR24"``, ... or its 32-bit code, see :func:`fourcc_layout`);
    ``shape`` is ``(width, height)`` in pixels of the frame, ``pitch`` the
    row pitch in bytes (``None``: tight rows).

    Returns one :class:`pyopencl.Image`, or for a fourcc of several planes a
    tuple of them, one per plane (NV12: luma R8 and chroma RG8 of half width
    and height; P010 the same in 16 bits).  ``planes`` gives ``(offset,
    pitch)`` per plane where the frame is not laid out the usual way (each
    plane right after the previous one, every plane with the same pitch).

    ``modifier`` (a DRM format modifier), plane offsets other than 0 and
    ``allow_tiled`` (consent to a copy through the Gen9 blitter for an X- or
    Y-tiled modifier) are properties of the cldmabuf layer: they raise
    :class:`NotSupportedError` without it.  Each plane holds a duplicate of
    ``fd``; the caller's fd stays the caller's.  Errors as :func:`import_buffer`
    (``CL_IMAGE_FORMAT_NOT_SUPPORTED``: a format the device lacks;
    ``CL_INVALID_IMAGE_SIZE``: the frame does not fit the dma-buf).
    """
    width, height = shape
    if isinstance(format, cl.ImageFormat):
        layout = (Plane(format, 1, 1, format.itemsize),)
    else:
        layout = fourcc_layout(format)
    if planes is None:
        planes, offset = [], 0
        for plane in layout:
            plane_pitch = pitch or (width // plane.width_divisor) * plane.bytes_per_pixel
            planes.append((offset, plane_pitch))
            offset += plane_pitch * (height // plane.height_divisor)
        if pitch is None and len(layout) == 1:
            planes = [(0, None)]
    elif len(planes) != len(layout):
        raise ValueError("%d planes given for a format of %d" % (len(planes), len(layout)))
    for plane in layout:
        if width % plane.width_divisor or height % plane.height_divisor:
            raise ValueError("a %dx%d frame cannot be split into planes of 1/%d x 1/%d"
                             % (width, height, plane.width_divisor, plane.height_divisor))

    extra = []
    if modifier is not None:
        extra += [_cl.MEM_DMA_BUF_MODIFIER_CLDMABUF, modifier]
    if allow_tiled:
        extra += [_cl.MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, 1]
    if extra or any(offset for offset, _ in planes):
        require_layer(context, "an image import with a plane offset, a modifier or tiling consent",
                      devices)
    else:
        require_extension(context, DMA_BUF_EXTENSION, devices)

    images = []
    try:
        for plane, (offset, plane_pitch) in zip(layout, planes):
            mine = _dup(fd)
            try:
                images.append(_import_plane(
                    context, mine, plane.format, width // plane.width_divisor,
                    height // plane.height_divisor, plane_pitch, offset, flags, devices, extra))
            except BaseException:
                os.close(mine)
                raise
    except BaseException:
        # The planes imported so far own their duplicates: releasing them
        # closes those.
        for image in images:
            image.release()
        raise
    return images[0] if len(images) == 1 else tuple(images)


def allocate(context, size, flags=mf.READ_WRITE, exporter="any"):
    """Allocates a buffer as a dma-buf with the layer's allocator; returns ``(buffer, fd)``.

    ``exporter`` is ``"any"`` (the layer's order: i915 GEM, the system
    dma-heap, udmabuf), ``"i915"``, ``"dma-heap"`` or ``"udmabuf"``.  ``fd``
    is a new fd of the buffer's dma-buf, the caller's to close (it outlives
    the buffer): for another process, EGL, V4L2, Vulkan or another context.
    The buffer is an import like any other: bracket device access with
    acquire and release.  Needs the layer (:class:`NotSupportedError`);
    ``CL_INVALID_OPERATION`` when no exporter is usable here,
    ``CL_INVALID_BUFFER_SIZE`` for a size every exporter refused.
    """
    if exporter not in _cl.DMA_BUF_EXPORTERS:
        raise ValueError("exporter %r is none of %s" % (exporter, ", ".join(_cl.DMA_BUF_EXPORTERS)))
    require_layer(context, "allocating a dma-buf (CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF)")
    mem = _create_buffer(context, [_cl.MEM_DMA_BUF_ALLOCATE_CLDMABUF,
                                   _cl.DMA_BUF_EXPORTERS[exporter]], flags, size)
    buf = cl.Buffer.from_int_ptr(mem, retain=False)
    try:
        fd = _mem_info_int(buf, _cl.MEM_DMA_BUF_FD_CLDMABUF, ctypes.c_int32)
    except BaseException:
        buf.release()
        raise
    return buf, fd


def _mem_info_int(mem, name, ctype):
    value = ctype(0)
    with layer_log() as log:
        code = _cl.loader().clGetMemObjectInfo(mem.int_ptr, name, ctypes.sizeof(value),
                                               ctypes.byref(value), None)
    check("clGetMemObjectInfo", code, log)
    return value.value


def import_route(mem):
    """How the layer gave the implementation access to an import.

    ``"host-ptr"`` or ``"image-from-buffer"`` (both zero-copy: the device
    works on the dma-buf's pages) or ``"copy"`` (a device copy, synchronised
    on acquire and release).  Raises :class:`Error` (``CL_INVALID_VALUE``)
    for an object that is not an import of the layer.
    """
    if not layer_loaded(mem.context.devices[0].platform):
        raise NotSupportedError("the import route is a query of the cldmabuf layer, not loaded here")
    return _cl.DMA_BUF_ROUTES[_mem_info_int(mem, _cl.MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, ctypes.c_uint32)]


def exporter(mem):
    """The exporter that allocated a buffer of :func:`allocate`: ``"i915"``, ``"dma-heap"`` or ``"udmabuf"``."""
    code = _mem_info_int(mem, _cl.MEM_DMA_BUF_EXPORTER_CLDMABUF, ctypes.c_uint32)
    names = {v: k for k, v in _cl.DMA_BUF_EXPORTERS.items()}
    return names.get(code, str(code))
