"""Binary semaphores with sync_file import and export (cl_khr_external_semaphore_sync_fd)."""

import ctypes
import fcntl
import os

import pyopencl as cl

from . import _cl
from ._errors import check, layer_log
from ._support import SYNC_FD_EXTENSION, extension_function, require_extension


def _fn(platform, name):
    return extension_function(platform, name, SYNC_FD_EXTENSION)


class Semaphore:
    """A ``cl_semaphore_khr`` (pyopencl has no type for it).

    Made by :func:`create_semaphore` or :func:`semaphore_from_sync_fd`;
    :attr:`int_ptr` is the C handle.  Released by :meth:`release`, by leaving
    a ``with`` block, or when garbage-collected.
    """

    def __init__(self, context, device, int_ptr):
        self.context = context
        self.device = device
        self.int_ptr = int_ptr
        self._platform = device.platform

    def release(self):
        if self.int_ptr:
            handle, self.int_ptr = self.int_ptr, None
            _fn(self._platform, "clReleaseSemaphoreKHR")(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    def __del__(self):
        try:
            self.release()
        except Exception:  # at interpreter exit the modules may be gone already
            pass

    @property
    def payload(self):
        """1 when a signal ran that no wait or export has taken yet, else 0."""
        value = ctypes.c_uint64(0)
        code = _fn(self._platform, "clGetSemaphoreInfoKHR")(
            self.int_ptr, _cl.SEMAPHORE_PAYLOAD_KHR, ctypes.sizeof(value), ctypes.byref(value), None)
        check("clGetSemaphoreInfoKHR", code)
        return value.value

    def export_sync_fd(self):
        """A new sync_file fd for the pending signal (the caller closes it); see :func:`export_sync_fd`."""
        fd = ctypes.c_int32(-1)
        with layer_log() as log:
            code = _fn(self._platform, "clGetSemaphoreHandleForTypeKHR")(
                self.int_ptr, self.device.int_ptr, _cl.SEMAPHORE_HANDLE_SYNC_FD_KHR,
                ctypes.sizeof(fd), ctypes.byref(fd), None)
        check("clGetSemaphoreHandleForTypeKHR", code, log)
        return fd.value


def _create(context, device, props):
    if device is None:
        if len(context.devices) != 1:
            raise ValueError("a context of several devices needs device= for a semaphore")
        device = context.devices[0]
    elif len(context.devices) != 1:
        props = props + [_cl.SEMAPHORE_DEVICE_HANDLE_LIST_KHR, device.int_ptr,
                         _cl.SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR]
    platform = require_extension(context, SYNC_FD_EXTENSION, [device], "a sync_fd semaphore")
    create = _fn(platform, "clCreateSemaphoreWithPropertiesKHR")
    err = ctypes.c_int32(0)
    with layer_log() as log:
        handle = create(context.int_ptr, _cl.properties(
            [_cl.SEMAPHORE_TYPE_KHR, _cl.SEMAPHORE_TYPE_BINARY_KHR] + props), ctypes.byref(err))
    if not handle:
        check("clCreateSemaphoreWithPropertiesKHR", err.value or _cl.INVALID_VALUE, log)
    return Semaphore(context, device, handle)


def create_semaphore(context, exportable=False, device=None):
    """A binary semaphore; ``exportable=True`` lets :func:`export_sync_fd` hand out its signals.

    An exportable semaphore needs a fence the layer can signal (sw_sync or
    vgem, docs/semaphores.md): without one the call raises :class:`Error`
    with ``CL_INVALID_DEVICE``.
    """
    props = []
    if exportable:
        props = [_cl.SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, _cl.SEMAPHORE_HANDLE_SYNC_FD_KHR,
                 _cl.SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR]
    return _create(context, device, props)


def semaphore_from_sync_fd(context, fd, device=None):
    """A semaphore whose next wait waits for the sync_file ``fd`` (a producer's fence).

    The semaphore imports a duplicate of ``fd``; the caller's fd stays the
    caller's.  An fd that is not a sync_file raises :class:`Error` with
    ``CL_INVALID_VALUE``; a closed one OSError.
    """
    mine = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 0)
    try:
        return _create(context, device, [_cl.SEMAPHORE_HANDLE_SYNC_FD_KHR, mine])
    except BaseException:
        os.close(mine)
        raise


def export_sync_fd(semaphore):
    """A new sync_file fd that signals when the semaphore's pending signal runs.

    The semaphore must have been created with ``exportable=True`` and have a
    signal enqueued (``CL_INVALID_OPERATION`` otherwise); the export takes
    that signal, as Vulkan's SYNC_FD export does.  The caller closes the fd.
    """
    return semaphore.export_sync_fd()


def _enqueue(name, queue, semaphores, wait_for):
    if isinstance(semaphores, Semaphore):
        semaphores = [semaphores]
    fn = _fn(queue.device.platform, name)
    n, array = _cl.handles(semaphores)
    n_events, events = _cl.handles(wait_for)
    event = ctypes.c_void_p(0)
    with layer_log() as log:
        code = fn(queue.int_ptr, n, array, None, n_events, events, ctypes.byref(event))
    check(name, code, log)
    return cl.Event.from_int_ptr(event.value, retain=False)


def enqueue_signal_semaphores(queue, semaphores, wait_for=None):
    """Signals the semaphores after every earlier command of ``queue``; returns the :class:`pyopencl.Event`."""
    return _enqueue("clEnqueueSignalSemaphoresKHR", queue, semaphores, wait_for)


def enqueue_wait_semaphores(queue, semaphores, wait_for=None):
    """Makes later commands of ``queue`` wait for the semaphores; returns the :class:`pyopencl.Event`."""
    return _enqueue("clEnqueueWaitSemaphoresKHR", queue, semaphores, wait_for)
