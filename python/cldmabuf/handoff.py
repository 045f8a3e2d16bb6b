"""Acquire and release of imported objects (cl_khr_external_memory)."""

import ctypes

import pyopencl as cl

from . import _cl
from ._errors import check, layer_log
from ._support import extension_function

_ACQUIRE = "clEnqueueAcquireExternalMemObjectsKHR"
_RELEASE = "clEnqueueReleaseExternalMemObjectsKHR"


def _flatten(mems):
    # A multi-planar import_image() returns a tuple: accept it as it comes.
    for m in mems:
        if isinstance(m, (tuple, list)):
            yield from _flatten(m)
        else:
            yield m


def _enqueue(name, queue, mems, wait_for):
    mems = list(_flatten(mems))
    fn = extension_function(queue.device.platform, name, "cl_khr_external_memory")
    n_mems, mem_array = _cl.handles(mems)
    n_events, event_array = _cl.handles(wait_for)
    event = ctypes.c_void_p(0)
    with layer_log() as log:
        code = fn(queue.int_ptr, n_mems, mem_array, n_events, event_array, ctypes.byref(event))
    check(name, code, log)
    return cl.Event.from_int_ptr(event.value, retain=False)


def enqueue_acquire(queue, mems, wait_for=None):
    """Enqueues the acquire of imported objects; returns its :class:`pyopencl.Event`.

    Commands enqueued after it see what the producer wrote: the layer waits
    for the dma-buf's fences (bounded by ``CLDMABUF_FENCE_TIMEOUT_MS``) and
    begins the CPU-access bracket.  An object that is not an import raises
    :class:`Error` with ``CL_INVALID_MEM_OBJECT``.
    """
    return _enqueue(_ACQUIRE, queue, mems, wait_for)


def enqueue_release(queue, mems, wait_for=None):
    """Enqueues the release of imported objects; returns its :class:`pyopencl.Event`.

    When the event completes, the dma-buf holds what the devices wrote and
    other consumers may use it.
    """
    return _enqueue(_RELEASE, queue, mems, wait_for)


class acquired:
    """``with acquired(queue, *mems, wait_for=None) as handoff:``

    Enqueues the acquire of ``mems`` on entering and their release on leaving
    (also when the block raises), so everything enqueued on ``queue`` in the
    block works on the acquired objects.  :attr:`acquire_event` and, after
    the block, :attr:`release_event` are the commands' :class:`pyopencl.Event`:
    wait for the release before another consumer (or the CPU) reads the
    dma-buf.  On an out-of-order queue the release waits for every command
    enqueued before it (a marker), as an in-order queue does by itself.
    """

    def __init__(self, queue, *mems, wait_for=None):
        self.queue = queue
        self.mems = tuple(_flatten(mems))
        self.wait_for = wait_for
        self.acquire_event = None
        self.release_event = None

    def __enter__(self):
        self.acquire_event = enqueue_acquire(self.queue, self.mems, self.wait_for)
        return self

    def __exit__(self, *exc):
        wait_for = None
        if self.queue.properties & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE:
            wait_for = [cl.enqueue_marker(self.queue)]
        self.release_event = enqueue_release(self.queue, self.mems, wait_for)
        return False
