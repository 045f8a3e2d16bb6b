"""dma-buf import for pyopencl: cl_khr_external_memory_dma_buf from Python.

pyopencl has no way to import a dma-buf.  This package builds
:class:`pyopencl.Buffer` and :class:`pyopencl.Image` objects over dma-buf
file descriptors and brackets their use, calling the OpenCL C API through
ctypes (no compiled extension).  It works with the cldmabuf layer
(``OPENCL_LAYERS=$(pkg-config --variable=layer cldmabuf)``) on any OpenCL
implementation, and with an implementation that lists
``cl_khr_external_memory_dma_buf`` itself; the layer's additions (plane
offsets, modifiers, the allocator, the import route) need the layer.

::

    import pyopencl as cl, cldmabuf

    buf = cldmabuf.import_buffer(ctx, fd, size)          # the caller keeps fd
    with cldmabuf.acquired(queue, buf) as handoff:
        prg.kernel(queue, (n,), None, buf)
    handoff.release_event.wait()                         # the dma-buf holds the result

Errors are :class:`Error` (a :class:`pyopencl.Error` naming the OpenCL status
and quoting the layer's log line) and :class:`NotSupportedError` (no
extension here: the message says how to enable the layer).
"""

try:
    import pyopencl  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("cldmabuf needs pyopencl (Debian: apt install python3-pyopencl): %s" % e) from e

from ._errors import Error, NotSupportedError, set_log_capture
from ._support import layer_loaded
from .handoff import acquired, enqueue_acquire, enqueue_release
from .memory import Plane, allocate, exporter, fourcc_layout, import_buffer, import_image, import_route
from .semaphores import (Semaphore, create_semaphore, enqueue_signal_semaphores,
                         enqueue_wait_semaphores, export_sync_fd, semaphore_from_sync_fd)

__version__ = "0.1.0"

# Shown as cldmabuf.Error, not as the private module that defines it.
for _name in ("Error", "NotSupportedError", "Semaphore", "Plane"):
    globals()[_name].__module__ = __name__
del _name

__all__ = [
    "Error", "NotSupportedError", "Plane", "Semaphore",
    "acquired", "allocate", "create_semaphore", "enqueue_acquire", "enqueue_release",
    "enqueue_signal_semaphores", "enqueue_wait_semaphores", "export_sync_fd", "exporter",
    "fourcc_layout", "import_buffer", "import_image", "import_route", "layer_loaded",
    "semaphore_from_sync_fd", "set_log_capture",
]
