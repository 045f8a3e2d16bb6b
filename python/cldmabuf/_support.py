"""What a context's platform offers: the extensions, and whether the layer is loaded."""

import ctypes

from . import _cl
from ._errors import NotSupportedError, layer_hint

DMA_BUF_EXTENSION = "cl_khr_external_memory_dma_buf"
SYNC_FD_EXTENSION = "cl_khr_external_semaphore_sync_fd"

_layer_loaded = {}


def layer_loaded(platform):
    """True when the cldmabuf layer sits between the program and ``platform``.

    Asks for the layer's counters (``CL_PLATFORM_STATS_CLDMABUF``), which the
    layer answers on every platform and no implementation knows.
    """
    key = platform.int_ptr
    if key not in _layer_loaded:
        size = ctypes.c_size_t(0)
        code = _cl.loader().clGetPlatformInfo(key, _cl.PLATFORM_STATS_CLDMABUF, 0, None,
                                              ctypes.byref(size))
        _layer_loaded[key] = code == _cl.SUCCESS and size.value > 0
    return _layer_loaded[key]


def _context_devices(context, devices):
    return list(devices) if devices else list(context.devices)


def require_extension(context, extension, devices=None, what="a dma-buf import"):
    """The platform of ``context``; raises NotSupportedError when a device lacks ``extension``."""
    devices = _context_devices(context, devices)
    platform = devices[0].platform
    missing = [d for d in devices if extension not in d.extensions.split()]
    if missing:
        raise NotSupportedError(
            "%s needs %s, which device '%s' of platform '%s' does not list: neither the cldmabuf "
            "layer nor the OpenCL implementation provides it here; %s"
            % (what, extension, missing[0].name.strip(), platform.name.strip(), layer_hint()))
    return platform


def require_layer(context, what, devices=None):
    """The platform of ``context``; raises NotSupportedError without the layer."""
    platform = require_extension(context, DMA_BUF_EXTENSION, devices, what)
    if not layer_loaded(platform):
        raise NotSupportedError(
            "%s is an addition of the cldmabuf layer, which is not loaded for platform '%s' (the "
            "platform imports dma-bufs itself); %s" % (what, platform.name.strip(), layer_hint()))
    return platform


def extension_function(platform, name, extension):
    fn = _cl.extension_function(platform.int_ptr, name)
    if fn is None:
        raise NotSupportedError(
            "platform '%s' lists %s but has no %s; %s"
            % (platform.name.strip(), extension, name, layer_hint()))
    return fn
